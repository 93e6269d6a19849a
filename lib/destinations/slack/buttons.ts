/**
 * The controls on an event's own Slack message, when the config has `actions.slack`
 * (docs/actions.md): the buttons act on the event (api/slack.ts reads the clicks).
 */
import type { EventDelivery } from '../../render/group.ts';

type Block = Record<string, unknown>;

/**
 * The actions block's id: `exposure:<key>` on a message a Slack app posted (a click's follow-up
 * edits it), `exposure-w:<key>` on one an incoming webhook posted (the click's answer replaces it
 * through its `response_url`: nothing else can).
 */
export const BLOCK_PREFIX = { app: 'exposure:', webhook: 'exposure-w:' } as const;

/**
 * The `action_id` of the account menu beside a login with an identity verdict (identity-menu.ts).
 * Here, with the other controls' ids, because the API's start reads it (api/slack.ts) and should
 * not carry the menus' code.
 */
export const IDENTITY_ACTION_ID = 'exposure:identity';

/** How long `Silence similar` may hold back: the select's options. */
export const SILENCE_CHOICES = [
  ['for 1 hour', 'PT1H'],
  ['for 1 day', 'P1D'],
  ['for 7 days', 'P7D'],
] as const;

/**
 * The buttons of an event's own message (docs/actions.md): Ignore and Remediated, or their
 * undo once done, and the `Silence similar` select. The block's id carries the event's key (and so
 * its tenant), each option `<duration>|<type>|<identifier ids>`: what a silence of similar events
 * matches. A silence is never broader than the event: one without identifiers gets no select (its
 * silence would hold back every event of its type), and Slack takes an id of 255 characters and a
 * value of 150, so an event whose key or silence does not fit goes without one.
 */
export function actionButtons(
  alert: EventDelivery,
  flags: { ignored?: boolean; remediated?: boolean },
  form: 'app' | 'webhook' = 'app',
): Block[] {
  const key = alert.key;
  const blockId = `${BLOCK_PREFIX[form]}${key}`;
  if (blockId.length > 255 || key.length > 2_000) return [];
  const ids = (alert.item.identifiers ?? []).map((i) => i.id).join(',');
  const similar = SILENCE_CHOICES.map(([label, duration]) => ({
    text: { type: 'plain_text', text: label },
    value: `${duration}|${alert.item.metadata.type}|${ids}`,
  }));
  const select =
    ids !== '' && similar.every((o) => o.value.length <= 150)
      ? [
          {
            type: 'static_select',
            action_id: 'exposure:silence',
            placeholder: { type: 'plain_text', text: 'Silence similar' },
            options: similar,
          },
        ]
      : [];
  return [
    {
      type: 'actions',
      block_id: blockId,
      elements: [...flagButtons(key, flags), ...select],
    },
  ];
}

/** The two buttons of a message's actions block once an action left `flags` (an edit's new row). */
export function flagButtons(key: string, flags: { ignored?: boolean; remediated?: boolean }): Block[] {
  const button = (id: string, label: string, style?: 'primary') => ({
    type: 'button',
    action_id: id,
    text: { type: 'plain_text', text: label },
    value: key,
    ...(style ? { style } : {}),
  });
  return [
    flags.ignored ? button('exposure:unignore', 'Unignore') : button('exposure:ignore', 'Ignore'),
    flags.remediated
      ? button('exposure:unremediate', 'Not remediated')
      : button('exposure:remediate', 'Remediated', 'primary'),
  ];
}

/**
 * Acting on one alert from its detail (docs/console.md): ignore, remediate and
 * their undo (`POST /events/actions`), the account actions on a credential with a verdict
 * (`POST /identity/actions`), and `Silence similar` (a dry run, then `POST /silences`). Each is
 * confirmed first, carries an Idempotency-Key (a retried request is the same change), and is
 * offered only when the token's scopes allow it.
 *
 * `Silence similar` is as Slack's (lib/api/slack-similar.ts): never broader than the event, its
 * type, its identifiers and its tenant (`topLevel` for a top-level event where tenants exist); an
 * event that names no identifiers gets none.
 */
import { call, explain, idempotencyKey } from '../api.ts';
import { confirmChange } from '../confirm.ts';
import { type Child, errorLine, field, fill, h, select, statusLine } from '../dom.ts';
import type { AlertDetail, Silence, View } from '../types.ts';
import { countHeld, knownStatus } from './words.ts';

type Item = Record<string, unknown>;
const obj = (v: unknown): Item => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Item) : {});

/** Whether an action worked: its recorded result is `ok` (else the error, `refused: …` or `recorded`). */
export function succeeded(result: unknown): boolean {
  return result === 'ok';
}

/** Ignored and remediated, as the last successful action of each pair left the event. */
function flags(d: AlertDetail): { ignored: boolean; remediated: boolean } {
  const done = [...d.actions].filter((a) => succeeded(a.result)).sort((a, b) => a.at.localeCompare(b.at));
  let ignored = false;
  let remediated = false;
  for (const a of done) {
    if (a.type === 'ignore' || a.type === 'unignore') ignored = a.type === 'ignore';
    if (a.type === 'remediate' || a.type === 'unremediate') remediated = a.type === 'remediate';
  }
  return { ignored, remediated };
}

const EVENT_WORDS: Record<string, [button: string, done: string, meaning: string]> = {
  ignore: ['Ignore', 'Ignored', 'It is marked ignored at the upstream'],
  unignore: ['Undo ignore', 'No longer ignored', 'It is no longer marked ignored at the upstream'],
  remediate: ['Mark remediated', 'Marked remediated', 'It is marked remediated at the upstream'],
  unremediate: [
    'Undo remediated',
    'No longer remediated',
    'It is no longer marked remediated at the upstream',
  ],
};

const ACCOUNT_WORDS: Record<string, [label: string, meaning: string]> = {
  revokeSessions: [
    'Revoke sessions',
    'Every session and refresh token of the account ends; the person signs in again.',
  ],
  requirePasswordChange: [
    'Require a password change',
    'The person must choose a new password at the next sign-in. Each time this is done, another change is required.',
  ],
  confirmCompromised: [
    'Confirm compromised',
    'The provider records the account as compromised (high user risk).',
  ],
  disable: ['Disable the account', 'Nobody can sign in to the account until it is enabled again.'],
  enable: ['Enable the account', 'The account can sign in again.'],
};

/** The leaked login a credential names: `identity_name`, or `<name>@<domain>` for a bare name. */
export function loginOf(item: Item): string | undefined {
  const name = item.identity_name;
  if (typeof name !== 'string' || !name) return undefined;
  return name.includes('@') || typeof item.domain !== 'string' ? name : `${name}@${item.domain}`;
}

export function actSection(
  v: View,
  d: AlertDetail,
  reload: (notice: Child) => void,
): HTMLElement | undefined {
  const item = d.item;
  const said = h('div', { class: 'said' });
  const reason = h('input', { name: 'reason', maxlength: 500, autocomplete: 'off' });
  const parts: Child[] = [];
  let usesReason = false;
  const fail = (error: unknown, scope?: Parameters<typeof explain>[1]) =>
    fill(said, errorLine(explain(error, scope)));

  const uid = obj(item.metadata).uid;
  if (d.kind === 'event' && typeof uid === 'string' && v.can('events:act')) {
    const { ignored, remediated } = flags(d);
    usesReason = true;
    const act = async (action: string) => {
      const [, done, meaning] = EVENT_WORDS[action] as [string, string, string];
      const ok = await confirmChange({
        title: `${EVENT_WORDS[action]?.[0]}?`,
        body: [
          h('p', {}, `${meaning}: `, h('code', {}, uid), '.'),
          h('p', {}, 'Every destination that was sent this event hears of it once.'),
        ],
        confirm: EVENT_WORDS[action]?.[0] ?? action,
      });
      if (!ok) return;
      fill(said, statusLine('Sending the action…'));
      try {
        const body = { action, uids: [uid], ...(reason.value.trim() ? { reason: reason.value.trim() } : {}) };
        const answer = await call<{ results: { uid: string; ok: boolean; error?: string }[] }>(
          'POST',
          'events/actions',
          { body, key: idempotencyKey() },
        );
        const result = answer.body.results[0];
        if (result?.ok) reload(statusLine(`${done}: ${uid}.`));
        else
          fill(
            said,
            errorLine(`Not done: ${result?.error ?? 'the upstream gave no result for this event'}.`),
          );
      } catch (error) {
        fail(error, 'events:act');
      }
    };
    parts.push(
      h(
        'div',
        { class: 'buttons', role: 'group', 'aria-label': 'Event actions' },
        h(
          'button',
          { type: 'button', onclick: () => void act(ignored ? 'unignore' : 'ignore') },
          EVENT_WORDS[ignored ? 'unignore' : 'ignore']?.[0],
        ),
        h(
          'button',
          { type: 'button', onclick: () => void act(remediated ? 'unremediate' : 'remediate') },
          EVENT_WORDS[remediated ? 'unremediate' : 'remediate']?.[0],
        ),
      ),
    );
  }

  const login = loginOf(item);
  const accountActions = Object.keys(ACCOUNT_WORDS).filter((a) =>
    a === 'disable' || a === 'enable' ? v.can('identity:disable') : v.can('identity:act'),
  );
  if (d.kind === 'credential' && d.identity && login && accountActions.length) {
    usesReason = true;
    const choice = select(
      'account-action',
      accountActions.map((a) => [a, ACCOUNT_WORDS[a]?.[0] ?? a]),
    );
    const actOnAccount = async () => {
      const action = choice.value;
      const [label, meaning] = ACCOUNT_WORDS[action] ?? [action, ''];
      const ok = await confirmChange({
        title: `${label}?`,
        body: [
          h(
            'p',
            {},
            'Account: ',
            h('code', {}, login),
            ` (${d.identity?.provider}${d.tenant ? `, tenant ${d.tenant.name}` : ''}).`,
          ),
          h('p', {}, meaning),
        ],
        confirm: label,
      });
      if (!ok) return;
      fill(said, statusLine('Asking the identity provider…'));
      try {
        const body = {
          action,
          logins: [login],
          ...(d.tenant ? { tenant: d.tenant.id } : {}),
          ...(reason.value.trim() ? { reason: reason.value.trim() } : {}),
        };
        const answer = await call<{
          id?: string;
          results?: { login: string; ok: boolean; error?: string }[];
        }>('POST', 'identity/actions', { body, key: idempotencyKey() });
        const result = answer.body.results?.[0];
        if (answer.status === 202 || !result)
          reload(
            statusLine(
              `Handed to a worker (action ${answer.body.id ?? 'recorded'}); its outcome shows under Actions once the provider answers.`,
            ),
          );
        else if (result.ok) reload(statusLine(`${label}: done for ${login}.`));
        else fill(said, errorLine(`Not done for ${login}: ${result.error ?? 'no reason given'}.`));
      } catch (error) {
        fail(error, action === 'disable' || action === 'enable' ? 'identity:disable' : 'identity:act');
      }
    };
    parts.push(
      h(
        'div',
        { class: 'inline', role: 'group', 'aria-label': 'Account actions' },
        field('Account action', choice),
        h('button', { type: 'button', onclick: () => void actOnAccount() }, 'Act on the account…'),
      ),
    );
  }

  const identifiers = (Array.isArray(item.identifiers) ? item.identifiers : [])
    .map((i) => obj(i).id)
    .filter((id): id is number => typeof id === 'number');
  const type = obj(item.metadata).type;
  if (d.kind === 'event' && typeof type === 'string' && identifiers.length && v.can('silences:write')) {
    const span = select('similar-for', [
      ['PT1H', '1 hour'],
      ['P1D', '1 day'],
      ['P7D', '7 days'],
    ]);
    const silence = async () => {
      fill(said, statusLine('Counting what it would hold…'));
      try {
        const tenants = d.tenant ? undefined : (await knownStatus()).streams.some((s) => s.tenant);
        const match = {
          kind: 'event',
          types: [type],
          identifiers,
          ...(d.tenant ? { tenants: [d.tenant.id] } : tenants ? { topLevel: true } : {}),
        };
        const body = { match, until: span.value, reason: `Silence similar, from the console, on ${d.key}` };
        const dry = await countHeld(body);
        fill(said);
        const ok = await confirmChange({
          title: 'Silence similar events?',
          body: [
            h(
              'p',
              {},
              `Events of type ${type} naming identifiers ${identifiers.join(', ')}${d.tenant ? ` of tenant ${d.tenant.name}` : ''}, for ${span.selectedOptions[0]?.textContent ?? span.value}.`,
            ),
            h(
              'p',
              { class: 'would-hold' },
              `It would have held ${dry.wouldHold} of ${dry.of} recent alerts.`,
            ),
          ],
          confirm: 'Create the silence',
        });
        if (!ok) return;
        const made = (await call<{ silence: Silence }>('POST', 'silences', { body, key: idempotencyKey() }))
          .body;
        reload(statusLine(`Silenced until ${made.silence.until} (${made.silence.id}).`));
      } catch (error) {
        fail(error, 'silences:write');
      }
    };
    parts.push(
      h(
        'div',
        { class: 'inline', role: 'group', 'aria-label': 'Silence similar' },
        field('Silence similar for', span),
        h('button', { type: 'button', onclick: () => void silence() }, 'Silence similar…'),
      ),
    );
  }

  if (parts.length === 0) return undefined;
  return h(
    'section',
    { class: 'act', 'aria-labelledby': 'act-title' },
    h('h3', { id: 'act-title' }, 'Act'),
    usesReason ? field('Reason (optional, kept in the audit trail)', reason) : null,
    parts,
    said,
  );
}

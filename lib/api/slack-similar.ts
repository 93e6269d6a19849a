/**
 * `Silence similar`, the select on an event's Slack message (docs/actions.md): a run-time
 * silence never broader than the event. It matches the event's type and its identifiers, and its
 * tenant: a `tenants` entry's event (its key `<tenant>:<uid>`) silences that tenant's events alone,
 * and a top-level event, in a deployment with tenants, the top-level sources' alone (`topLevel`).
 * An event without identifiers gets no select (destinations/slack/buttons.ts); an older message's select
 * without them is refused, since it would silence every event of the type.
 *
 * The silence is named by the click (its team, user and `action_ts`): the same request again
 * (Slack's retry, a replay) finds the silence it made instead of making a second one, however
 * long after, for as long as the silence it made can live: a click time within the longest
 * silence (and a day for clocks) of now names its silence by that time. A click time outside it
 * (a clock far off) gets an id of now, as a new silence: an id with a time outside the window the
 * active silences are read from (state/silences.ts) would never hold anything.
 */
import type { ActDeps } from '../actions/events.ts';
import { BLOCK_PREFIX } from '../destinations/slack/buttons.ts';
import { splitKey } from '../poll/ids.ts';
import { ApiError } from './errors.ts';
import { addSilence, type SilenceDeps } from './silences.ts';

/** What the silence select carries: the event's key (its block's id), type and identifier ids, and for how long. */
export interface Similar {
  key: string;
  type: string;
  identifiers: number[];
  for: 'PT1H' | 'P1D' | 'P7D';
}

/** Reads `exposure:<key>` and `<duration>|<type>|<ids>` (destinations/slack/render.ts writes them). */
export function parseSimilar(blockId: string | undefined, value: string | undefined): Similar | undefined {
  const prefix = [BLOCK_PREFIX.app, BLOCK_PREFIX.webhook].find((p) => blockId?.startsWith(p));
  if (!prefix || !blockId || !value) return undefined;
  const [duration, type, ids = ''] = value.split('|');
  if (duration !== 'PT1H' && duration !== 'P1D' && duration !== 'P7D') return undefined;
  if (!type || !/^[a-z0-9_]+$/.test(type)) return undefined;
  const identifiers = ids === '' ? [] : ids.split(',').map(Number);
  if (identifiers.some((n) => !Number.isSafeInteger(n))) return undefined;
  return { key: blockId.slice(prefix.length), type, identifiers, for: duration };
}

/** A click's time from its `action_ts` (`<seconds>.<micro>`), in ms; undefined when it is not one. */
function actionTime(ts: string | undefined): number | undefined {
  if (!ts || !/^\d{1,12}(\.\d{1,9})?$/.test(ts)) return undefined;
  return Math.floor(Number(ts) * 1000);
}

const DAY_MS = 86_400_000;
/** How old a click may be to name its silence: the longest silence (P7D), and a day for clocks. */
const CLICK_PAST_MS = 8 * DAY_MS;
/** How far ahead of this clock a click's time may be to name its silence. */
const CLICK_AHEAD_MS = DAY_MS;

/**
 * Makes the silence a verified, allowed click asks for (once per click), and says what it did in
 * words for the clicker. A select that names no event is a 400.
 */
export async function silenceSimilar(
  deps: SilenceDeps & { act?: Pick<ActDeps, 'tenants'> },
  click: {
    block_id?: string;
    selected_option?: { value?: string };
    action_ts?: string;
    /** `slack:<user id>`. */
    by: string;
    /** The click's own id: its team, user and `action_ts`. */
    requestId: string;
  },
): Promise<string> {
  const similar = parseSimilar(click.block_id, click.selected_option?.value);
  if (!similar) throw new ApiError('invalid_request', 'the select names no event');
  if (!similar.identifiers.length)
    return `Not silenced: that event names no identifiers, so a similar silence would hold back every ${similar.type} event. Make a narrower one with \`silences add\`.`;
  const tenants = (await deps.act?.tenants?.ids()) ?? [];
  const { tenant } = splitKey(similar.key, tenants);
  const at = actionTime(click.action_ts);
  const now = deps.now();
  const named = at !== undefined && at >= now - CLICK_PAST_MS && at <= now + CLICK_AHEAD_MS;
  const { silence } = await addSilence(deps, {
    client: click.by,
    requestId: click.requestId,
    ...(named ? { once: { id: click.requestId, at } } : {}),
    body: {
      match: {
        kind: 'event',
        types: [similar.type],
        identifiers: similar.identifiers,
        ...(tenant !== undefined ? { tenants: [tenant] } : tenants.length ? { topLevel: true } : {}),
      },
      until: similar.for,
      reason: `Silence similar, from Slack, on ${similar.key}`,
    },
  });
  const whose =
    tenant !== undefined ? ` of tenant ${tenant}` : tenants.length ? ' of the top-level sources' : '';
  return `Silenced events of type ${similar.type} for the same identifiers${whose} until ${silence.until} (${silence.id}).`;
}

/**
 * Longer than 300 lines because Slack's one endpoint takes every kind of interaction (buttons,
 * menus, the slash command), each checked the same way before its own module runs.
 *
 * Requests from Slack (docs/actions.md, from Slack): `POST /slack/interactions` (the
 * buttons and the select on an event's message, and the account menus beside a login with an
 * identity verdict: slack-identity.ts) and `POST /slack/commands` (`/exposure`).
 *
 * - Verified before anything reads them: `application/x-www-form-urlencoded`, at most 64 KiB, the
 *   signature (`v0=` HMAC-SHA256 of `v0:<timestamp>:<raw body>` with the signing secret) compared
 *   in constant time over the raw bytes, a timestamp within 5 minutes. A failure is 401, logged and
 *   counted (`SlackRequestsRejected`), and writes nothing: the URL is public.
 * - Then the workspace and the user: only `allowedUsers` (or `"*"`, every member of `teamId`) may
 *   act or look up; anyone else gets a refusal only they see, and nothing happens but an entry in
 *   the actions' audit trail (who, what they tried, refused).
 * - Slack gets its answer at once. An action is recorded first (its id is the team, the user and
 *   the click's `action_ts`, so a replay within Slack's 5 minutes is the same action and does
 *   nothing more); the upstream call and the follow-ups, and a lookup's answer (posted to the
 *   request's `response_url`, only when it starts with `responseUrlPrefix`), run after the answer
 *   (`background`).
 * - In a dry run (dry-run.ts), a button or menu that would act answers in words that nothing was
 *   done; `Silence similar` (the table only) and lookups work as usual.
 */

import { createHmac, timingSafeEqual } from 'node:crypto';
import { type ActDeps, recordAction } from '../actions/events.ts';
import { type LookupAnswer, type LookupQuery, lookupProblem } from '../actions/lookup.ts';
import { answerAt } from '../actions/slack-answer.ts';
import type { SlackWork } from '../actions/slack-work.ts';
import { BLOCK_PREFIX, IDENTITY_ACTION_ID } from '../destinations/slack/buttons.ts';
import type { Logger } from '../log.ts';
import type { Metrics } from '../metrics.ts';
import type { ActionAuditEntry, EventActionType } from '../state/actions.ts';
import { readBounded } from './body.ts';
import { DRY_RUN_SLACK, type DryRunFlag } from './dry-run.ts';
import { ApiError } from './errors.ts';
import type { SilenceDeps } from './silences.ts';
import type { SlackAccounts } from './slack-identity.ts';
import { parseSimilar, silenceSimilar } from './slack-similar.ts';

/** A request from Slack holds at most this: a `block_actions` payload carries the whole message. */
export const SLACK_MAX_BYTES = 64 * 1024;
/** Slack's replay window: a timestamp further from now is refused. */
export const SLACK_WINDOW_SECONDS = 5 * 60;

export interface SlackSettings {
  signingSecret: string;
  teamId: string;
  /** Slack user ids, or `*` for every member of `teamId`. */
  allowedUsers: readonly string[];
  /** Slack user ids who may also disable and enable accounts (section 12); never `*`. */
  identityAdmins?: readonly string[];
  responseUrlPrefix: string;
}

export interface SlackDeps extends SilenceDeps, DryRunFlag {
  slack: SlackSettings;
  act?: ActDeps;
  /** Acting on accounts (section 12, slack-identity.ts): the action module, made when first asked for. */
  identity?: { accounts(): Promise<SlackAccounts> };
  lookup?: (query: LookupQuery) => Promise<LookupAnswer>;
  /** The tenant a Slack channel's routes carry alone (the catalog knows), if one. */
  tenantOfChannel?: (channel: string) => Promise<number | undefined>;
  logger: Logger;
  metrics?: Metrics;
  now: () => number;
  /** POSTs a JSON answer to a `response_url` (global fetch by default). */
  post?: (url: string, body: unknown) => Promise<void>;
  /**
   * Leaves work for after Slack has its answer: to this process (serve, npm start), or to a queue
   * a worker reads (on AWS). Resolves once it is handed over, not done.
   */
  handOff: (work: SlackWork) => Promise<void>;
}

/** Why a request is refused before it is read: undefined when its signature holds. */
export function slackSignatureProblem(
  raw: Uint8Array,
  timestamp: string | undefined,
  signature: string | undefined,
  secret: string,
  nowMs: number,
): string | undefined {
  if (!timestamp || !/^\d{1,12}$/.test(timestamp)) return 'no X-Slack-Request-Timestamp';
  if (Math.abs(nowMs / 1000 - Number(timestamp)) > SLACK_WINDOW_SECONDS)
    return 'the timestamp is more than 5 minutes from now';
  if (!signature || !/^v0=[0-9a-f]{64}$/.test(signature)) return 'no valid X-Slack-Signature';
  const mac = createHmac('sha256', secret).update(`v0:${timestamp}:`).update(raw).digest();
  const given = Buffer.from(signature.slice(3), 'hex');
  return timingSafeEqual(mac, given) ? undefined : 'the signature does not match';
}

/**
 * The request's raw bytes: the form content type, at most SLACK_MAX_BYTES, whatever
 * `Content-Length` says or a chunked body sends (body.ts reads no further than the bound).
 */
export async function readSlackBody(request: Request): Promise<Uint8Array> {
  const type = request.headers.get('content-type')?.split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded')
    throw new ApiError('unsupported_media_type', 'Slack sends application/x-www-form-urlencoded');
  return readBounded(request, SLACK_MAX_BYTES);
}

/** Verifies a request (401 on failure, logged and counted, nothing written), and returns its form. */
export function verifiedForm(
  deps: SlackDeps,
  raw: Uint8Array,
  headers: Headers,
  route: string,
): URLSearchParams {
  const problem = slackSignatureProblem(
    raw,
    headers.get('x-slack-request-timestamp') ?? undefined,
    headers.get('x-slack-signature') ?? undefined,
    deps.slack.signingSecret,
    deps.now(),
  );
  if (problem) {
    deps.logger.warn('refused a request claiming to be from Slack', { route, reason: problem });
    deps.metrics?.count('SlackRequestsRejected', 1, { route });
    throw new ApiError('unauthorized', `not a verified Slack request: ${problem}`);
  }
  try {
    return new URLSearchParams(new TextDecoder('utf-8', { fatal: true }).decode(raw));
  } catch {
    throw new ApiError('invalid_request', 'the body is not valid UTF-8');
  }
}

/** Whether this member of that workspace may act and look up. */
export function mayAct(settings: SlackSettings, team: string | undefined, user: string | undefined): boolean {
  if (!user || team !== settings.teamId) return false;
  return settings.allowedUsers.includes('*') || settings.allowedUsers.includes(user);
}

/**
 * A verified request from a Slack user not allowed to act (or, for an account's disable and
 * enable, not an identity admin), in the actions' audit trail: who, what they tried, on which
 * event or account, refused. A trail that cannot be written is logged: the refusal stands either way.
 */
async function auditRefusal(
  deps: SlackDeps,
  tried: {
    id: string;
    type: ActionAuditEntry['type'];
    uids: string[];
    user: string | undefined;
    team: string | undefined;
    refused?: string;
  },
): Promise<void> {
  const entry: ActionAuditEntry = {
    id: tried.id,
    type: tried.type,
    uids: tried.uids,
    by: `slack:${tried.user ?? 'unknown'}`,
    at: new Date(deps.now()).toISOString(),
    refused: tried.refused ?? 'not allowed: not in actions.slack.allowedUsers of this workspace',
    ...(tried.team !== deps.slack.teamId ? { team: tried.team ?? 'unknown' } : {}),
  };
  try {
    // One trail for every kind of action: the event actions' store, else the accounts'.
    const trail = deps.act?.actions ?? (await deps.identity?.accounts())?.actions;
    if (!trail) throw new Error('no audit trail of actions here');
    await trail.audit(entry);
  } catch (error) {
    deps.logger.error('could not audit a refused Slack request', { user: tried.user, error });
  }
}

const NOT_ALLOWED =
  'You are not allowed to act on alerts or look things up here. Ask an admin to add your Slack user id to actions.slack.allowedUsers.';

const ACTION_TYPES: Record<string, EventActionType> = {
  'exposure:ignore': 'ignore',
  'exposure:remediate': 'remediate',
  'exposure:unignore': 'unignore',
  'exposure:unremediate': 'unremediate',
};

/** What the buttons of a message say is done (an undo button means done). */
function shownFlags(blocks: Record<string, unknown>[] | undefined): {
  ignored?: boolean;
  remediated?: boolean;
} {
  const ids = JSON.stringify(blocks ?? []);
  return {
    ...(ids.includes('"exposure:unignore"') ? { ignored: true } : {}),
    ...(ids.includes('"exposure:unremediate"') ? { remediated: true } : {}),
  };
}

interface BlockActionsPayload {
  type?: string;
  user?: { id?: string };
  team?: { id?: string };
  response_url?: string;
  message?: { text?: string; blocks?: Record<string, unknown>[] };
  actions?: {
    action_id?: string;
    block_id?: string;
    value?: string;
    action_ts?: string;
    selected_option?: { value?: string };
  }[];
}

/** `POST /slack/interactions`, verified: a button or the silence select on an event's message. */
export async function slackInteraction(deps: SlackDeps, form: URLSearchParams): Promise<void> {
  let payload: BlockActionsPayload;
  try {
    payload = JSON.parse(form.get('payload') ?? '') as BlockActionsPayload;
  } catch {
    throw new ApiError('invalid_request', 'the form has no JSON payload');
  }
  const user = payload.user?.id;
  const team = payload.team?.id;
  const [click] = payload.actions ?? [];
  if (payload.type !== 'block_actions' || !click?.action_id?.startsWith('exposure:')) return;
  // A short answer only the clicker sees, before Slack has its 200 (2 s at most).
  const reply = (text: string) =>
    answerAt(
      { ...deps, responseUrlPrefix: deps.slack.responseUrlPrefix },
      payload.response_url,
      { response_type: 'ephemeral', replace_original: false, text },
      2_000,
    ).catch((error: unknown) => deps.logger.warn('could not answer at response_url', { error }));
  if (click.action_id === IDENTITY_ACTION_ID) {
    // An account menu (section 12): its own checks, and its own module, loaded with its first click.
    const { identityClick } = await import('./slack-identity.ts');
    const clickId = `slack:${team ?? ''}:${user ?? ''}:${click.action_ts ?? ''}`;
    await identityClick(
      deps,
      {
        team,
        user,
        allowed: mayAct(deps.slack, team, user),
        admin: user !== undefined && (deps.slack.identityAdmins ?? []).includes(user),
        value: click.selected_option?.value,
        actionTs: click.action_ts,
        responseUrl: payload.response_url,
      },
      {
        reply,
        refuse: async (tried, text) => {
          await auditRefusal(deps, { id: clickId, user, team, ...tried });
          await reply(text ?? NOT_ALLOWED);
        },
      },
    );
    return;
  }
  if (!mayAct(deps.slack, team, user)) {
    deps.logger.info('a Slack user not allowed to act clicked a button', { user, team });
    const what = click.action_id === 'exposure:silence' ? 'silence' : ACTION_TYPES[click.action_id];
    const key =
      what === 'silence' ? parseSimilar(click.block_id, click.selected_option?.value)?.key : click.value;
    await auditRefusal(deps, {
      id: `slack:${team ?? ''}:${user ?? ''}:${click.action_ts ?? ''}`,
      type: what ?? 'unknown',
      uids: key ? [key] : [],
      user,
      team,
    });
    await reply(NOT_ALLOWED);
    return;
  }
  const by = `slack:${user}`;
  const type = ACTION_TYPES[click.action_id];
  if (type) {
    const uid = click.value ?? '';
    if (!deps.act || !uid) throw new ApiError('invalid_request', 'the button names no event');
    // A dry run acts on nothing upstream and records nothing: the clicker hears so.
    if (deps.dryRun) {
      await reply(DRY_RUN_SLACK);
      return;
    }
    const act = deps.act;
    // The click's own id: the same click again (a replay within Slack's window) is the same action.
    const id = `slack:${team}:${user}:${click.action_ts ?? ''}`;
    // Written down before Slack has its answer: if the work after it is lost (a function frozen
    // once it answered), a delivery pass finishes the action.
    const request = { type, uids: [uid], by, id };
    await recordAction(act, request);
    // A message an incoming webhook posted can only be replaced through the click's response_url.
    const fromWebhook = click.block_id?.startsWith(BLOCK_PREFIX.webhook) && payload.message;
    await deps.handOff({
      kind: 'slack-action',
      request,
      ...(payload.response_url ? { responseUrl: payload.response_url } : {}),
      ...(fromWebhook ? { replace: { ...payload.message, flags: shownFlags(payload.message?.blocks) } } : {}),
    });
    return;
  }
  if (click.action_id === 'exposure:silence')
    await reply(
      await silenceSimilar(deps, {
        ...click,
        by,
        requestId: `slack:${team}:${user}:${click.action_ts ?? ''}`,
      }),
    );
}

const HELP = [
  '*/exposure lookup <account, domain or keyword>*: what the leak store knows (an `@` means an account, a `*` a keyword, else a domain). Only you see the answer.',
  '*/exposure help*: this.',
  'On an alert: *Ignore* or *Remediated* act on the event upstream (and undo), *Silence similar* holds back alerts of its type for its identifiers.',
  'Beside a leaked login with an identity verdict, a menu acts on its account: revoke sessions, require a password change, confirm compromised; disable and enable for identity admins.',
].join('\n');

/** `POST /slack/commands`, verified: `/exposure help` or `/exposure lookup <what>`. Answers at once. */
export async function slackCommand(deps: SlackDeps, form: URLSearchParams): Promise<Record<string, unknown>> {
  const ephemeral = (text: string) => ({ response_type: 'ephemeral', text });
  const team = form.get('team_id') ?? undefined;
  const user = form.get('user_id') ?? undefined;
  if (!mayAct(deps.slack, team, user)) {
    const at = form.get('trigger_id') ?? String(deps.now());
    await auditRefusal(deps, {
      id: `slack:${team ?? ''}:${user ?? ''}:${at}`,
      type: 'lookup',
      uids: [],
      user,
      team,
    });
    return ephemeral(NOT_ALLOWED);
  }
  const [verb = '', ...rest] = (form.get('text') ?? '').trim().split(/\s+/);
  const what = rest.join(' ');
  if (verb === 'lookup' && what && deps.lookup) {
    const query: LookupQuery = what.includes('@')
      ? { account: what.split(/[\s,]+/).filter(Boolean) }
      : what.includes('*')
        ? { keyword: what }
        : { domain: what };
    // Refused in words here, not handed on: what is not a domain never reaches the upstream.
    const problem = lookupProblem(query);
    if (problem) return ephemeral(`Cannot look that up: ${shown(problem)}`);
    const responseUrl = form.get('response_url');
    // With tenants: as the tenant whose items this channel's routes carry (none: the top level).
    const tenant = await deps.tenantOfChannel?.(form.get('channel_id') ?? '');
    await deps.handOff({
      kind: 'slack-lookup',
      query: tenant === undefined ? query : { ...query, tenant: String(tenant) },
      ...(responseUrl ? { responseUrl } : {}),
    });
    return ephemeral(`Looking up ${shown(what)}…`);
  }
  return ephemeral(HELP);
}

/**
 * A person's words echoed in a Slack answer: one line, controls out, `&`, `<` and `>` as
 * entities (so nothing pings or links), at most 200 characters.
 */
function shown(text: string): string {
  const line = text.replace(/[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069]/g, ' ');
  const cut = line.length > 200 ? `${line.slice(0, 199)}…` : line;
  return cut.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

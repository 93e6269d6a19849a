/**
 * A choice in a Slack account menu (docs/identity.md): `exposure:identity`, its option
 * `<action>|<item key>` (destinations/slack/identity-menu.ts writes it). Loaded by slack.ts with
 * the first such click, so the API's start does not carry the identity code.
 *
 * - Who: a member of the workspace in `allowedUsers`, and for `disable` and `enable` also in
 *   `identityAdmins` (named one by one). Anyone else gets a refusal only they see and an entry in
 *   the audit trail; nothing is recorded.
 * - Which account: the item key's stored verdict (`idv#<key>`, IdentityStore.itemLogin) names the
 *   tenant (its scope) and the login; a click can name no other. A verdict no longer kept: the
 *   clicker hears that the login is no longer known, and nothing happens.
 * - Done elsewhere: the action is recorded (lib/identity/act.ts) and its id handed off as
 *   `identity-action` work, which a worker with the providers' secrets finishes and answers at the
 *   click's `response_url`. Nothing here calls a provider (the API on AWS has none of their secrets),
 *   and Slack has its empty 200 at once. In a dry run, once the click is checked, the clicker
 *   hears that nothing was done, and nothing is recorded.
 *
 * The action's id, and why two clicks at once act once. Every click has its own `action_ts`, so
 * an id made of it (as an event's button makes its id) would make a double click two actions, and
 * these are not all idempotent (a second `requirePasswordChange` forces a second change). So the id
 * names the person, the action and the account (a digest of the tenant and the login, never the
 * login) and a number: `slack:<team>:<user>:<action>:<account>:<n>`, the n-th record dated by the
 * click that made it (Slack's `action_ts`, inside the signed payload). A click walks the records
 * from the first:
 * - one dated within CLICK_WINDOW_MS of the click is the click's own: the same click again (Slack's
 *   retry, a replay: the same `action_ts`), or another click of a double click. It answers from
 *   that record and records nothing;
 * - one dated earlier and done is an earlier choice: on to the next number;
 * - one dated earlier and still open: refused, still under way (not a second action meanwhile);
 * - one dated later than the click (a click that reaches us late): refused as out of date;
 * - no record: the click creates this one. Two clicks at the same moment both try; the table's
 *   conditional put lets one, and the other finds it, within the window.
 * The walk reads only what no later click changes (each record's date, its number), so a replay
 * lands where its first delivery did. One exception, harmless: a click refused while the earlier
 * action was open may, replayed once that is done, take its action then (once).
 */
import { createHash } from 'node:crypto';
import type { SlackWork } from '../actions/slack-work-shape.ts';
import { parseMenuValue } from '../destinations/slack/identity-menu.ts';
import {
  type AccountActionRecord,
  type AccountDeps,
  outcomeOf,
  recordAccountAction,
} from '../identity/act.ts';
import type { Scope } from '../identity/store.ts';
import { ACTION_WORDS, type AccountAction, ADMIN_ACTIONS } from '../identity/words.ts';
import type { Logger } from '../log.ts';
import { slackText } from '../render/escape.ts';
import { DRY_RUN_SLACK, type DryRunFlag } from './dry-run.ts';
import { ApiError } from './errors.ts';

/** Clicks of one person on one action for one account this close together are one action. */
export const CLICK_WINDOW_MS = 30_000;
/** Records one person may make for one action on one account from Slack; past them, the CLI or API. */
export const MAX_REPEATS = 20;

/** What acting on accounts from Slack needs: the action module's table parts, no provider. */
export type SlackAccounts = Pick<AccountDeps, 'actions' | 'store' | 'clock'>;

export interface IdentityClickDeps extends DryRunFlag {
  /** The action module's dependencies (made when first asked for); absent without `identity`. */
  identity?: { accounts(): Promise<SlackAccounts> };
  handOff(work: SlackWork): Promise<void>;
  logger: Logger;
}

/** A verified click on an account menu, and what slack.ts already knows of its clicker. */
export interface IdentityClick {
  team: string | undefined;
  user: string | undefined;
  /** In `allowedUsers` of our workspace. */
  allowed: boolean;
  /** In `identityAdmins`. */
  admin: boolean;
  /** The chosen option's value. */
  value: string | undefined;
  actionTs: string | undefined;
  responseUrl: string | undefined;
}

export interface ClickAnswers {
  /** An answer only the clicker sees. */
  reply(text: string): Promise<void>;
  /**
   * Refuses the click: in the audit trail, and an answer only the clicker sees (`text`, else the
   * one every door gives a user not allowed to act).
   */
  refuse(tried: { type: string; uids: string[]; refused: string }, text?: string): Promise<void>;
}

export const NOT_ADMIN =
  'Only identity admins may disable or enable an account. Ask an admin to add your Slack user id to actions.slack.identityAdmins. Nothing was done.';

const time = (iso: string) => `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`;

/** `slack:<team>:<user>:<action>:<account>`: the account a digest, never the login. */
function baseId(team: string, user: string, action: AccountAction, scope: Scope, login: string): string {
  const account = createHash('sha256').update(`${scope}\n${login.toLowerCase()}`).digest('base64url');
  return `slack:${team}:${user}:${action}:${account.slice(0, 16)}`;
}

type Placed =
  | { created: AccountActionRecord }
  | { same: AccountActionRecord }
  | { busy: AccountActionRecord }
  | { stale: AccountActionRecord }
  | { full: true };

/** Where a click lands among its person's records for this action and account (module comment). */
async function place(
  accounts: SlackAccounts,
  base: string,
  request: { action: AccountAction; login: string; tenant: number | undefined; by: string },
  clickMs: number,
): Promise<Placed> {
  // The record is dated by the click, not by this process: its replays then measure the same.
  const clickClock = { ...accounts.clock, now: () => clickMs };
  for (let n = 1; n <= MAX_REPEATS; n++) {
    const id = `${base}:${n}`;
    let record = await accounts.actions.get(id);
    if (!record) {
      const begun = await recordAccountAction(
        { actions: accounts.actions, clock: clickClock },
        {
          id,
          action: request.action,
          logins: [request.login],
          ...(request.tenant === undefined ? {} : { tenant: request.tenant }),
          by: request.by,
        },
      );
      if (begun.created) return { created: begun.record };
      record = begun.record;
    }
    const at = Date.parse(record.at);
    if (Math.abs(clickMs - at) < CLICK_WINDOW_MS) return { same: record };
    if (clickMs < at) return { stale: record };
    if (record.status !== 'done') return { busy: record };
  }
  return { full: true };
}

/** The clicker's answer when the click is one already recorded. */
function sameAnswer(record: AccountActionRecord, login: string): string {
  const what = `${ACTION_WORDS[record.type]} for ${slackText(login, 120)}`;
  if (record.status !== 'done')
    return `Already under way: ${what} (chosen ${time(record.at)}). Its outcome follows here.`;
  const lines = outcomeOf(record).results.map(
    (r) => `• ${r.ok ? 'done' : slackText(r.error ?? 'not done', 300)}`,
  );
  return `Already chosen ${time(record.at)}: ${what}\n${lines.join('\n')}`;
}

/** The click's login, for the audit trail of a refusal: best effort, never in its way. */
async function loginFor(deps: IdentityClickDeps, itemKey: string | undefined): Promise<string[]> {
  if (!itemKey || !deps.identity) return [];
  try {
    const found = await (await deps.identity.accounts()).store.itemLogin(itemKey);
    return found ? [found.login] : [];
  } catch {
    return [];
  }
}

/** A click on an account menu, verified (slack.ts): see the module comment. */
export async function identityClick(
  deps: IdentityClickDeps,
  click: IdentityClick,
  answers: ClickAnswers,
): Promise<void> {
  const chosen = parseMenuValue(click.value);
  if (!click.allowed || !click.user) {
    deps.logger.info('a Slack user not allowed to act chose an account action', {
      user: click.user,
      team: click.team,
    });
    await answers.refuse({
      type: chosen?.action ?? 'unknown',
      uids: await loginFor(deps, chosen?.itemKey),
      refused: 'not allowed: not in actions.slack.allowedUsers of this workspace',
    });
    return;
  }
  if (!chosen) throw new ApiError('invalid_request', 'the menu option names no account action');
  if (ADMIN_ACTIONS.has(chosen.action) && !click.admin) {
    deps.logger.info('a Slack user who is not an identity admin chose to disable or enable', {
      user: click.user,
    });
    await answers.refuse(
      {
        type: chosen.action,
        uids: await loginFor(deps, chosen.itemKey),
        refused: 'not allowed: disable and enable need actions.slack.identityAdmins',
      },
      NOT_ADMIN,
    );
    return;
  }
  const clickMs = Number(click.actionTs) * 1000;
  if (!click.actionTs || !/^\d{1,12}(\.\d{1,9})?$/.test(click.actionTs) || !Number.isFinite(clickMs))
    throw new ApiError('invalid_request', 'the click has no action_ts');
  if (!deps.identity) {
    deps.logger.warn('an account menu was used, but this service has no identity configured');
    await answers.reply(
      'Acting on accounts is not set up here (the config has no identity). Nothing was done.',
    );
    return;
  }
  const accounts = await deps.identity.accounts();
  const target = await accounts.store.itemLogin(chosen.itemKey);
  if (!target) {
    await answers.reply(
      'That login is no longer known here: its verdict is no longer kept, so nothing was done. Use the CLI or the API if it still needs doing.',
    );
    return;
  }
  // A dry run calls no provider and records nothing (dry-run.ts).
  if (deps.dryRun) return answers.reply(DRY_RUN_SLACK);
  const { login, scope } = target;
  const placed = await place(
    accounts,
    baseId(click.team ?? '', click.user, chosen.action, scope, login),
    {
      action: chosen.action,
      login,
      tenant: scope === 'top' ? undefined : scope,
      by: `slack:${click.user}`,
    },
    Math.floor(clickMs),
  );
  const what = `${ACTION_WORDS[chosen.action]} for ${slackText(login, 120)}`;
  if ('created' in placed) {
    // Its outcome comes from the worker, at this click's response_url.
    await deps.handOff({
      kind: 'identity-action',
      id: placed.created.id,
      ...(click.responseUrl ? { responseUrl: click.responseUrl } : {}),
    });
    return;
  }
  if ('same' in placed) return answers.reply(sameAnswer(placed.same, login));
  if ('busy' in placed)
    return answers.reply(
      `Your earlier choice to ${what} (${time(placed.busy.at)}) is still under way: nothing more was done. Choose it again once it is done, if it must be done twice.`,
    );
  if ('stale' in placed)
    return answers.reply(`That choice is older than your last one to ${what}: nothing was done.`);
  await answers.reply(
    `You have chosen to ${what} ${MAX_REPEATS} times from Slack: nothing more is done from here. Use the CLI or the API.`,
  );
}

/**
 * The Slack door of account actions (docs/identity.md): signed `block_actions` requests
 * choosing an option of an account menu (`exposure:identity`), through `app.request` and through
 * the Lambda handler, against real dynalite and the identity providers' stand-in over HTTP, with
 * each click's answers at a real `response_url` receiver.
 *
 * The API never calls a provider: it records the action and hands `identity-action` work (its id)
 * on; the test then runs that work as a worker would. A user not allowed, or not an identity admin
 * choosing disable, is refused ephemerally and audited, with nothing recorded; a double click, a
 * replay and Slack's retry are one action, which reaches the provider once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSlackWork, type SlackWork } from '../../lib/actions/slack-work.ts';
import { type ApiDeps, createApiApp } from '../../lib/api/app.ts';
import { createLambdaHandler } from '../../lib/api/lambda.ts';
import type { SlackDeps } from '../../lib/api/slack.ts';
import { CLICK_WINDOW_MS, NOT_ADMIN } from '../../lib/api/slack-identity.ts';
import { systemClock } from '../../lib/clock.ts';
import { IDENTITY_ACTION_ID, menuValue } from '../../lib/destinations/slack/identity-menu.ts';
import { ALL_ENTRA_ROLES } from '../../lib/emulator/identity/index.ts';
import { type AccountDeps, accountStore } from '../../lib/identity/act.ts';
import { providerClients } from '../../lib/identity/index.ts';
import { IdentityStore } from '../../lib/identity/store.ts';
import type { AccountAction, IdentityVerdict } from '../../lib/identity/words.ts';
import { memoryLogger } from '../../lib/log.ts';
import { ActionStore } from '../../lib/state/actions.ts';
import { MemoryAuditStore } from '../../lib/state/audit.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { type IdentityProviders, identityProviders } from '../helpers/identity-providers.ts';
import { type Receiver, useReceivers } from '../helpers/receiver.ts';
import { slackSigned } from '../helpers/slack-api.ts';
import { configFrom } from '../helpers/world.ts';
import { functionUrlEvent } from './function-url.ts';
import { monotonicNow, tableDeps } from './harness.ts';

const db = useDynalite();
const receivers = useReceivers();
let idp: IdentityProviders;

beforeAll(async () => {
  idp = await identityProviders({
    entra: {
      users: [
        { userPrincipalName: 'jane@acme.com', id: 'u-jane' },
        { userPrincipalName: 'bob@acme.com', id: 'u-bob' },
      ],
    },
  });
  idp.stand.entra.roles = [...ALL_ENTRA_ROLES];
});
afterAll(() => idp.close());

const SECRET = 'slack-signing-secret-for-identity-tests';
const TEAM = 'T0TEAM01';
const ANA = 'U0ANA001';
const ADMIN = 'U0ADM001';
const EVE = 'U0EVE001';
/** A hostile login: it must reach the provider as it is, and no answer may ping with it. */
const HOSTILE = '<!channel>jane@acme.com';

const verdict = (userId: string): IdentityVerdict => ({
  provider: 'corp',
  verdict: 'at_risk',
  userId,
  enabled: true,
  leakDate: '2026-11-20T00:00:00Z',
});

/** Slack's `action_ts` for a moment: seconds and microseconds. */
const actionTs = (ms: number) => `${Math.floor(ms / 1000)}.${String(ms % 1000).padStart(3, '0')}123`;

async function setUp() {
  const table = await db.table();
  const now = monotonicNow();
  const clock = { ...systemClock, now };
  const io = { client: db.client, tableName: table, clock };
  const store = new IdentityStore(io);
  await store.keepVerdicts(
    [
      { key: '101', verdict: verdict('u-jane'), scope: 'top', login: 'jane@acme.com' },
      { key: '102', verdict: verdict('u-jane'), scope: 'top', login: 'jane@acme.com' },
      { key: '7:202', verdict: verdict('u-bob'), scope: 7, login: 'bob@acme.com' },
      { key: '103', verdict: verdict('u-eve'), scope: 'top', login: HOSTILE },
    ],
    true,
  );
  const providers = idp.providers({ entra: ['acme.com'] });
  const config = configFrom({
    destinations: { t: { type: 'console' } },
    identity: { providers },
    tenants: [{ id: 7, name: 'seven', identity: { providers } }],
  });
  const answers: Receiver = await receivers();
  const logger = memoryLogger('debug');
  // What the API has: the table, no provider (as on AWS, where only the workers read their secrets).
  const apiAccounts = { actions: accountStore(io), store, clock };
  // What a worker has: the providers too.
  const worker: AccountDeps = {
    actions: accountStore(io),
    store,
    providers: providerClients(config, idp.secrets, []),
    fetch,
    clock,
    logger,
    followUp: async () => [],
    callTimeoutMs: 3_000,
  };
  const handed: SlackWork[] = [];
  // `identity` as slack.ts reads it (and as the API's own identity routes take it).
  const deps: ApiDeps & Pick<SlackDeps, 'identity'> = {
    upstream: {
      toggleAsset: () => {
        throw new Error('no upstream in these tests');
      },
    },
    audit: new MemoryAuditStore(),
    loadApiClients: async () => ({}),
    logger,
    now,
    upstreamTimeoutMs: 1_000,
    ...tableDeps({ client: db.client, name: table }, now),
    slack: {
      signingSecret: SECRET,
      teamId: TEAM,
      allowedUsers: [ANA, ADMIN],
      identityAdmins: [ADMIN],
      responseUrlPrefix: `${answers.url}/`,
    },
    handOff: async (work) => {
      // As the queue would carry it: JSON.
      handed.push(JSON.parse(JSON.stringify(work)) as SlackWork);
    },
    identity: {
      accounts: async () => apiAccounts as AccountDeps,
      known: async () => undefined,
    },
  };
  const app = createApiApp(deps);
  const lambda = createLambdaHandler(app);
  /** The signed request Slack sends when `user` chooses `action` in the menu of `itemKey`. */
  const click = (
    user: string,
    action: AccountAction,
    itemKey: string,
    ms = Date.now(),
    extra: { team?: string; value?: string } = {},
  ) =>
    `payload=${encodeURIComponent(
      JSON.stringify({
        type: 'block_actions',
        user: { id: user },
        team: { id: extra.team ?? TEAM },
        response_url: `${answers.url}/actions/${user}/${ms}`,
        container: { type: 'message', message_ts: '1764158400.000100', channel_id: 'C0123ABCD' },
        actions: [
          {
            type: 'overflow',
            action_id: IDENTITY_ACTION_ID,
            block_id: 'b1',
            selected_option: {
              text: { type: 'plain_text', text: 'x' },
              value: extra.value ?? menuValue(action, itemKey),
            },
            action_ts: actionTs(ms),
          },
        ],
      }),
    )}`;
  const post = (body: string, headers = slackSigned(body, SECRET)) =>
    app.request('/slack/interactions', { method: 'POST', headers, body });
  /** Runs what the API handed off, as a worker does (answers at each click's response_url). */
  const work = async () => {
    for (const w of handed.splice(0))
      await runSlackWork({ identityAct: worker, responseUrlPrefix: `${answers.url}/`, logger }, w);
  };
  const said = () => answers.requests.map((r) => r.json() as { response_type: string; text: string });
  const openActions = () => apiAccounts.actions.unfinished(Date.now() + 3_600_000);
  const trail = () => new ActionStore(io).auditTrail();
  return { app, lambda, click, post, work, handed, said, answers, openActions, trail, apiAccounts, logger };
}

const acted = (action: string, login: string) =>
  idp.actions.filter((a) => a.action === action && a.login === login).length;

describe('account menus in Slack', () => {
  it('a choice is recorded, handed off as identity-action work by its id, and reaches the provider once, from the worker', async () => {
    const s = await setUp();
    const calls = idp.requests.length;
    const before = acted('revokeSessions', 'jane@acme.com');
    const res = await s.post(s.click(ANA, 'revokeSessions', '101'));
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('');
    // The API asked no provider anything.
    expect(idp.requests.length).toBe(calls);
    expect(s.handed).toHaveLength(1);
    const [work] = s.handed;
    expect(work).toEqual({
      kind: 'identity-action',
      id: expect.stringMatching(new RegExp(`^slack:${TEAM}:${ANA}:revokeSessions:[\\w-]{16}:1$`)),
      responseUrl: expect.stringContaining('/actions/'),
    });
    const id = (work as { id: string }).id;
    // The id names the account by a digest, never the login.
    expect(id).not.toContain('jane');
    expect(await s.apiAccounts.actions.get(id)).toMatchObject({
      type: 'revokeSessions',
      uids: ['jane@acme.com'],
      scope: 'top',
      by: `slack:${ANA}`,
      status: 'pending',
    });
    await s.work();
    expect(acted('revokeSessions', 'jane@acme.com') - before).toBe(1);
    expect(s.said().at(-1)).toMatchObject({
      response_type: 'ephemeral',
      text: expect.stringMatching(/^Done: revoke sessions/),
    });
    expect((await s.apiAccounts.actions.get(id))?.status).toBe('done');
  });

  it('through the Lambda handler: an empty 200, and the tenant taken from the stored verdict', async () => {
    const s = await setUp();
    const body = s.click(ANA, 'requirePasswordChange', '7:202');
    const result = await s.lambda(
      functionUrlEvent('POST', '/slack/interactions', { headers: slackSigned(body, SECRET), body }),
    );
    expect(result.statusCode).toBe(200);
    expect(result.body ?? '').toBe('');
    expect(s.handed).toHaveLength(1);
    const id = (s.handed[0] as { id: string }).id;
    expect(await s.apiAccounts.actions.get(id)).toMatchObject({ uids: ['bob@acme.com'], scope: 7 });
    const before = acted('requirePasswordChange', 'bob@acme.com');
    await s.work();
    expect(acted('requirePasswordChange', 'bob@acme.com') - before).toBe(1);
  });

  it('a user not allowed, or from another workspace: an ephemeral refusal, audited, nothing recorded or done', async () => {
    const s = await setUp();
    const calls = idp.requests.length;
    for (const body of [
      s.click(EVE, 'revokeSessions', '101'),
      s.click(ANA, 'revokeSessions', '101', Date.now(), { team: 'T0OTHER1' }),
    ]) {
      const res = await s.post(body);
      expect(res.status).toBe(200);
      expect(await res.text()).toBe('');
    }
    expect(s.handed).toEqual([]);
    expect(await s.openActions()).toEqual([]);
    expect(idp.requests.length).toBe(calls);
    const said = s.said();
    expect(said).toHaveLength(2);
    for (const answer of said) {
      expect(answer.response_type).toBe('ephemeral');
      expect(answer.text).toMatch(/not allowed/);
    }
    const refused = (await s.trail()).filter((e) => e.refused);
    expect(refused).toHaveLength(2);
    expect(refused.map((e) => e.by).sort()).toEqual([`slack:${ANA}`, `slack:${EVE}`]);
    for (const e of refused) expect(e).toMatchObject({ type: 'revokeSessions', uids: ['jane@acme.com'] });
  });

  it('disable and enable are for identity admins: another allowed user is refused and audited; an admin acts', async () => {
    const s = await setUp();
    const before = acted('disable', 'jane@acme.com');
    await s.post(s.click(ANA, 'disable', '101'));
    expect(s.handed).toEqual([]);
    expect(await s.openActions()).toEqual([]);
    expect(s.said()).toEqual([expect.objectContaining({ response_type: 'ephemeral', text: NOT_ADMIN })]);
    expect((await s.trail()).find((e) => e.refused)).toMatchObject({
      type: 'disable',
      by: `slack:${ANA}`,
      refused: expect.stringContaining('identityAdmins'),
    });
    await s.post(s.click(ADMIN, 'disable', '101'));
    expect(s.handed).toHaveLength(1);
    await s.work();
    expect(acted('disable', 'jane@acme.com') - before).toBe(1);
  });

  it('a double click, a replay and Slack’s retry are one action: one record, one hand-off, one call to the provider', async () => {
    const s = await setUp();
    const before = acted('confirmCompromised', 'jane@acme.com');
    const at = Date.now();
    // Two clicks 400 ms apart (two action_ts, two ids to Slack), arriving together; the second
    // on the other credential of the same login.
    const first = s.click(ANA, 'confirmCompromised', '101', at);
    const second = s.click(ANA, 'confirmCompromised', '102', at + 400);
    const answers = await Promise.all([s.post(first), s.post(second)]);
    expect(answers.map((r) => r.status)).toEqual([200, 200]);
    expect(s.handed).toHaveLength(1);
    // The replay (the same request, the same signature) and Slack's retry (signed anew).
    await s.post(first);
    await s.post(first, slackSigned(first, SECRET, Math.floor(Date.now() / 1000) + 1));
    expect(s.handed).toHaveLength(1);
    expect(await s.openActions()).toHaveLength(1);
    // The clicks that were not the first heard that it is under way.
    const early = s.said();
    expect(early).toHaveLength(3);
    for (const a of early)
      expect(a.text).toMatch(/^Already under way: confirm compromised for jane@acme\.com/);
    await s.work();
    expect(acted('confirmCompromised', 'jane@acme.com') - before).toBe(1);
    // Once done, the same click again says what came of it, and does nothing more.
    await s.post(second);
    await s.work();
    expect(s.said().at(-1)?.text).toMatch(
      /^Already chosen .*: confirm compromised for jane@acme\.com\n• done/,
    );
    expect(acted('confirmCompromised', 'jane@acme.com') - before).toBe(1);
    expect(s.handed).toEqual([]);
  });

  it('the same choice later than the window is a new action once the first is done; while it is open, refused', async () => {
    const s = await setUp();
    const before = acted('revokeSessions', 'bob@acme.com');
    const at = Date.now() - 3 * CLICK_WINDOW_MS;
    await s.post(s.click(ANA, 'revokeSessions', '7:202', at));
    expect(s.handed).toHaveLength(1);
    // Not yet done: a later choice is refused, not a second action meanwhile.
    await s.post(s.click(ANA, 'revokeSessions', '7:202', at + CLICK_WINDOW_MS + 1_000));
    expect(s.handed).toHaveLength(1);
    expect(s.said().at(-1)?.text).toMatch(/still under way: nothing more was done/);
    await s.work();
    await s.post(s.click(ANA, 'revokeSessions', '7:202', at + 2 * CLICK_WINDOW_MS + 5_000));
    expect(s.handed).toEqual([expect.objectContaining({ id: expect.stringMatching(/:2$/) })]);
    await s.work();
    expect(acted('revokeSessions', 'bob@acme.com') - before).toBe(2);
    // A click older than the last action, reaching us late, does nothing.
    await s.post(s.click(ANA, 'revokeSessions', '7:202', at + CLICK_WINDOW_MS + 2_000));
    expect(s.handed).toEqual([]);
    expect(s.said().at(-1)?.text).toMatch(/older than your last one/);
  });

  it('a hostile login is named in the answers escaped: nothing pings or links', async () => {
    const s = await setUp();
    const at = Date.now();
    await s.post(s.click(ANA, 'revokeSessions', '103', at));
    await s.post(s.click(ANA, 'revokeSessions', '103', at + 200));
    expect(s.handed).toHaveLength(1);
    const [answer] = s.said();
    expect(answer?.text).toContain('&lt;!channel&gt;jane@acme.com');
    expect(answer?.text).not.toMatch(/<[!@#]/);
    // The record names the login as it is (the provider is asked about that login, not its escape).
    expect((await s.openActions())[0]?.uids).toEqual([HOSTILE]);
  });

  it('an item whose verdict is no longer kept, or an option not ours: nothing recorded', async () => {
    const s = await setUp();
    const res = await s.post(s.click(ANA, 'revokeSessions', '999'));
    expect(res.status).toBe(200);
    expect(s.said().at(-1)?.text).toMatch(/no longer known/);
    const bad = await s.post(s.click(ANA, 'revokeSessions', '101', Date.now(), { value: `wipe|101` }));
    expect(bad.status).toBe(400);
    // Someone not allowed learns nothing from a bad value: refused as any other click of theirs.
    await s.post(s.click(EVE, 'revokeSessions', '101', Date.now(), { value: HOSTILE }));
    expect(s.said().at(-1)?.text).toMatch(/not allowed/);
    expect(s.handed).toEqual([]);
    expect(await s.openActions()).toEqual([]);
  });
});

/**
 * The automatic response (`identity.auto`; lib/identity/auto.ts) through real poll cycles against
 * the emulator, dynalite and the providers' stand-in: taken once per at-risk account (never for a
 * rotated, silenced, unrouted or excluded login), stopped at `maxPerHour` with two workers at
 * once (the alert says it is paused), and in a dry run only decided and said (never taken).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../lib/clock.ts';
import { ALL_ENTRA_ROLES } from '../../lib/emulator/identity/index.ts';
import { readEnvironment } from '../../lib/env.ts';
import { type AccountDeps, finishAccountActions, RATE_GIVE_UP_MS } from '../../lib/identity/act.ts';
import { AutoResponse } from '../../lib/identity/auto.ts';
import type { IdentityVerdict } from '../../lib/identity/words.ts';
import { memoryLogger } from '../../lib/log.ts';
import { runPollCycle } from '../../lib/poll/cycle.ts';
import { createRuntime } from '../../lib/runtime.ts';
import { ActionStore } from '../../lib/state/actions.ts';
import { ScanCommand } from '../../lib/state/sdk.ts';
import { ensureTable } from '../../lib/state/table.ts';
import { fakeClock } from '../helpers/clock.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { type IdentityProviders, identityProviders } from '../helpers/identity-providers.ts';
import { type Receiver, startReceiver } from '../helpers/receiver.ts';
import { configFrom } from '../helpers/world.ts';

const emu = useEmulator({ credentials: 0 });
const db = useDynalite();
let idp: IdentityProviders;
let hook: Receiver;
const LONG_AGO = '2001-01-01T00:00:00Z';

beforeAll(async () => {
  const users = [
    ...Array.from({ length: 6 }, (_, i) => ({
      userPrincipalName: `risk${i}@auto.test`,
      lastPasswordChangeDateTime: LONG_AGO,
    })),
    { userPrincipalName: 'admin-root@auto.test', lastPasswordChangeDateTime: LONG_AGO },
    { userPrincipalName: 'quiet@auto.test', lastPasswordChangeDateTime: LONG_AGO },
    { userPrincipalName: 'late@auto.test', lastPasswordChangeDateTime: LONG_AGO, id: 'u-late' },
    {
      userPrincipalName: 'fresh@auto.test',
      lastPasswordChangeDateTime: new Date(Date.now() + 86_400_000).toISOString(),
    },
  ];
  idp = await identityProviders({ entra: { users } });
  idp.stand.entra.roles = [...ALL_ENTRA_ROLES];
  hook = await startReceiver();
});
afterAll(async () => {
  await Promise.all([idp.close(), hook.close()]);
});

function config(maxPerHour: number, over: Record<string, unknown> = {}) {
  return configFrom({
    sources: { credentials: { domains: ['auto.test'], lookback: 'P1D' } },
    identity: {
      providers: idp.providers({ entra: ['auto.test'] }),
      auto: { atRisk: ['revokeSessions'], maxPerHour, exclude: ['admin-*@auto.test'] },
    },
    destinations: { siem: { type: 'webhook', url: hook.url } },
    routes: [{ name: 'all', to: ['siem'] }],
    silences: [
      {
        match: { domains: ['auto.test'], identity: ['at_risk'] },
        until: '2001-01-02T00:00:00Z',
        reason: 'expired long ago',
      },
    ],
    digest: { threshold: 1000, maxItems: 20 },
    ...over,
  });
}

async function runtime(
  maxPerHour: number,
  table: string,
  dryRun = false,
  over: Record<string, unknown> = {},
  write: (text: string) => void = () => {},
) {
  return createRuntime({
    env: readEnvironment({
      EXPOSURE_API_URL: emu.url,
      EXPOSURE_API_TOKEN: 'emu-acme-token',
      TABLE_NAME: table,
      DYNAMODB_ENDPOINT: db.endpoint,
    }),
    config: config(maxPerHour, over),
    secrets: idp.secrets,
    logger: memoryLogger('info'),
    dynamo: db.client,
    upstream: emu.client(),
    dryRun,
    write,
  });
}

const revoked = () => idp.actions.filter((a) => a.action === 'revokeSessions').map((a) => a.login);
type Item = { identity_name: string; _identity?: IdentityVerdict };
const received = () => hook.requests.flatMap((r) => (r.json() as { items: Item[] }).items);

describe('identity.auto', () => {
  it('is taken once per at-risk account that is sent, never for an excluded or rotated login, and the alert says it', async () => {
    const table = await db.table();
    const logins = [
      'risk0@auto.test',
      'risk0@auto.test',
      'risk1@auto.test',
      'admin-root@auto.test',
      'fresh@auto.test',
    ];
    emu.running.emulator.dataset.appendCredentials(logins.length, { logins });
    const before = revoked().length;
    const rt = await runtime(20, table);
    const summary = await runPollCycle(rt.cycle, 'credentials', { deadline: Date.now() + 60_000 });
    expect(summary.exitCode).toBe(0);
    expect(revoked().slice(before).sort()).toEqual(['risk0@auto.test', 'risk1@auto.test']);
    const items = received();
    const autoOf = (login: string) =>
      items.filter((i) => i.identity_name === login).map((i) => i._identity?.auto);
    expect(autoOf('risk1@auto.test')).toEqual([{ actions: ['revokeSessions'], id: expect.any(String) }]);
    // Two leaks of one account: one response, noted on one of them.
    expect(autoOf('risk0@auto.test').filter(Boolean)).toHaveLength(1);
    expect(autoOf('admin-root@auto.test')).toEqual([undefined]);
    expect(autoOf('fresh@auto.test')).toEqual([undefined]);
    // A later leak of the same account takes none.
    emu.running.emulator.dataset.appendCredentials(1, { logins: ['risk1@auto.test'] });
    await runPollCycle(rt.cycle, 'credentials', { deadline: Date.now() + 60_000 });
    expect(
      revoked()
        .slice(before)
        .filter((l) => l === 'risk1@auto.test'),
    ).toHaveLength(1);
    hook.requests.length = 0;
  });

  it('stops at maxPerHour across two workers at once; the rest say the response is paused', async () => {
    const table = await db.table();
    const logins = ['risk2@auto.test', 'risk3@auto.test', 'risk4@auto.test', 'risk5@auto.test'];
    emu.running.emulator.dataset.appendCredentials(logins.length, { logins });
    const before = revoked().length;
    const [a, b] = await Promise.all([runtime(2, table), runtime(2, table)]);
    await Promise.all([
      runPollCycle(a.cycle, 'credentials', { deadline: Date.now() + 60_000 }),
      runPollCycle(b.cycle, 'credentials', { deadline: Date.now() + 60_000 }),
    ]);
    expect(revoked().length - before).toBe(2);
    const paused = received().filter((i) => i._identity?.auto && 'paused' in i._identity.auto);
    expect(paused.length).toBeGreaterThanOrEqual(2);
    hook.requests.length = 0;
  });

  it('is not taken for an item silenced or routed nowhere', async () => {
    const before = revoked().length;
    emu.running.emulator.dataset.appendCredentials(1, { logins: ['quiet@auto.test'] });
    const silenced = await runtime(20, await db.table(), false, {
      silences: [{ match: { identity: ['at_risk'] }, until: '2100-01-01T00:00:00Z', reason: 'drill' }],
    });
    await runPollCycle(silenced.cycle, 'credentials', { deadline: Date.now() + 60_000 });
    const unrouted = await runtime(20, await db.table(), false, {
      routes: [{ name: 'rotated only', match: { identity: ['rotated'] }, to: ['siem'] }],
    });
    await runPollCycle(unrouted.cycle, 'credentials', { deadline: Date.now() + 60_000 });
    expect(revoked().length).toBe(before);
    hook.requests.length = 0;
  });

  it('a crash after the actions were recorded, before the account was marked: a re-walk still responds, once', async () => {
    const io = { client: db.client, tableName: await db.table(), clock: systemClock };
    const response = new AutoResponse(io);
    const verdict: IdentityVerdict = {
      provider: 'corp',
      verdict: 'at_risk',
      userId: 'u-9',
      leakDate: '2026-11-20T00:00:00Z',
    };
    const auto = { atRisk: ['revokeSessions'], maxPerHour: 20 };
    const recorded: string[] = [];
    const crash = new Error('crash between the two writes');
    await expect(
      response.decide('top', auto, verdict, 'nine@auto.test', ['revokeSessions'], async (note) => {
        recorded.push(note.id);
        throw crash;
      }),
    ).rejects.toBe(crash);
    const again = await response.decide(
      'top',
      auto,
      verdict,
      'nine@auto.test',
      ['revokeSessions'],
      async (note) => {
        recorded.push(note.id);
      },
    );
    expect(again).toEqual({ actions: ['revokeSessions'], id: recorded[0] });
    expect(new Set(recorded).size).toBe(1);
    // Marked now: a third leak of the account takes none.
    expect(
      await response.decide('top', auto, verdict, 'nine@auto.test', ['revokeSessions'], async () => {}),
    ).toBeUndefined();
  });

  it('refused for rate for an hour: the response fails, is reported and audited, and a later leak of the account takes a response again', async () => {
    const table = await db.table();
    const late = () => revoked().filter((l) => l === 'late@auto.test').length;
    // Graph refuses the revocation for rate twice: now, and an hour later.
    idp.stand.control.addFault({
      provider: 'entra',
      path: 'u-late/revokeSignInSessions',
      status: 429,
      retryAfter: 600,
      times: 2,
    });
    emu.running.emulator.dataset.appendCredentials(1, { logins: ['late@auto.test'] });
    const rt = await runtime(20, table);
    await runPollCycle(rt.cycle, 'credentials', { deadline: Date.now() + 60_000 });
    expect(late()).toBe(0);
    // Parked for the provider's turn; the pass an hour later is refused again: it fails.
    const reports: string[] = [];
    const later = {
      ...(rt.identityAct as AccountDeps),
      clock: fakeClock(Date.now() + RATE_GIVE_UP_MS + 1_000),
      report: async (title: string) => {
        reports.push(title);
      },
    };
    await finishAccountActions(later);
    expect(reports).toEqual([expect.stringMatching(/^identity action auto-.*: failed$/)]);
    const trail = await new ActionStore({
      client: db.client,
      tableName: table,
      clock: systemClock,
    }).auditTrail();
    const entry = trail.find((e) => e.uids.includes('late@auto.test'));
    expect(entry).toMatchObject({ by: 'auto', type: 'revokeSessions' });
    expect(entry?.results?.[0]).toMatchObject({ ok: false, error: expect.stringContaining('rate') });
    expect(late()).toBe(0);
    // The next leak of the account takes a response of its own (its turn comes when the
    // provider's rate allows: the shared lane stays paused for the 600 s Graph asked).
    hook.requests.length = 0;
    emu.running.emulator.dataset.appendCredentials(1, { logins: ['late@auto.test'] });
    await runPollCycle(rt.cycle, 'credentials', { deadline: Date.now() + 60_000 });
    const note = received().find((i) => i.identity_name === 'late@auto.test')?._identity?.auto;
    expect(note).toEqual({ actions: ['revokeSessions'], id: expect.stringMatching(/-r1$/) });
    const again = await later.actions.get(`${(note as { id: string }).id}~revokeSessions`);
    expect(again).toMatchObject({ by: 'auto', uids: ['late@auto.test'] });
    hook.requests.length = 0;
  });

  it('a dry run decides it and says so on the alert, calls no provider, records no action, and leaves it to the real run', async () => {
    const real = await db.table();
    const table = `${real}-dry-run`;
    await ensureTable(db.client, table);
    emu.running.emulator.dataset.appendCredentials(1, { logins: ['quiet@auto.test'] });
    const before = revoked().length;
    const shown: string[] = [];
    const rt = await runtime(20, table, true, {}, (text) => shown.push(text));
    await runPollCycle(rt.cycle, 'credentials', { deadline: Date.now() + 60_000 });
    expect(revoked().length).toBe(before);
    expect(shown.join('')).toContain('quiet@auto.test');
    expect(shown.join('')).toContain('automatic response (dry run, not taken): revoke sessions');
    // Decided in the dry run's own table only; no action recorded for anything to take.
    const kinds = async (name: string) =>
      ((await db.client.send(new ScanCommand({ TableName: name }))).Items ?? []).map((i) =>
        String(i.pk?.S).replace(/#.*/, ''),
      );
    expect(await kinds(table)).toContain('idauto');
    expect(await kinds(table)).not.toContain('idaction');
    expect(await kinds(real)).toEqual([]);
    // The real run takes it, as the dry run said it would.
    const realRun = await runtime(20, real);
    await runPollCycle(realRun.cycle, 'credentials', { deadline: Date.now() + 60_000 });
    expect(revoked().slice(before)).toContain('quiet@auto.test');
  });
});

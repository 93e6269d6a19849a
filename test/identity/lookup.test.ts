/**
 * The identity step (lib/identity/lookup.ts) against real dynalite, with provider clients whose
 * answers a test scripts: the bounds (3 s a lookup, 30 s a cycle, waits, rests), one lookup per
 * login per hour across cycles and runs, and a verdict decided once per item. The clients' HTTP
 * is tested against the stand-ins elsewhere (providers, unreadable), and the providers' rate, shared
 * by every run, in lanes.int.test.ts.
 */
import { describe, expect, it } from 'vitest';
import type { LookupResult, ProviderClient } from '../../lib/identity/client.ts';
import { type IdentityDeps, IdentityLookups } from '../../lib/identity/lookup.ts';
import { IdentityStore } from '../../lib/identity/store.ts';
import type { Account } from '../../lib/identity/verdict.ts';
import type { IdentityVerdict } from '../../lib/identity/words.ts';
import { memoryLogger } from '../../lib/log.ts';
import { MemoryMetrics } from '../../lib/metrics.ts';
import type { Credential } from '../../lib/upstream/schemas.ts';
import { fakeClock } from '../helpers/clock.ts';
import { useDynalite } from '../helpers/dynamo.ts';

const db = useDynalite();
const LEAK = '2026-11-20T00:00:00Z';

function credential(id: number, login: string, extra: Partial<Credential> = {}): Credential {
  const [, domain = 'acme.com'] = login.split('@');
  return {
    id,
    identity_name: login,
    domain,
    hash: 'S*******!',
    imported_at: '2026-11-25T10:00:00+00:00',
    source_id: 'src',
    source: { id: 'src', name: 'A leak', breached_at: LEAK },
    ...extra,
  } as Credential;
}

const account = (over: Partial<Account> = {}): Account => ({
  id: 'u1',
  displayName: 'Jane Doe',
  enabled: true,
  passwordChangedAt: '2026-03-01T00:00:00Z',
  unmanaged: false,
  ...over,
});

/** A client whose answer per login a test sets; it counts every lookup. */
function scripted(name = 'corp', domains = ['acme.com']) {
  const calls: string[] = [];
  let answer: (login: string, signal: AbortSignal) => Promise<LookupResult> = async () => ({
    answer: { found: true, account: account() },
  });
  const client: ProviderClient = {
    type: 'entra',
    name,
    domains,
    cannot: () => undefined,
    act: async () => ({ ok: true }),
    lookup: (login, ctx) => {
      calls.push(login);
      // As the real clients do: the answer's own time (ctx.answerMs) within the step's signal.
      const timer = ctx.answerMs === undefined ? [] : [AbortSignal.timeout(ctx.answerMs)];
      return answer(login, AbortSignal.any([ctx.signal, ...timer]));
    },
  };
  return {
    client,
    calls,
    answer(fn: typeof answer) {
      answer = fn;
    },
  };
}

const hang = (signal: AbortSignal) =>
  new Promise<LookupResult>((resolve) =>
    signal.addEventListener('abort', () => resolve({ failed: 'no answer in time' }), { once: true }),
  );

async function setup(clients: ProviderClient[], over: Partial<IdentityDeps> = {}) {
  const clock = fakeClock(Date.parse('2026-11-26T12:00:00Z'));
  const table = await db.table();
  const store = new IdentityStore({ client: db.client, tableName: table, clock });
  const metrics = new MemoryMetrics();
  const refusals: string[] = [];
  const deps = (): IdentityDeps => ({
    store,
    providers: new Map([['top', clients]]),
    fetch,
    now: () => Date.now(),
    logger: memoryLogger(),
    metrics,
    refused: async (_scope, provider, message) => {
      refusals.push(`${provider}: ${message}`);
    },
    accepted: async () => {},
    ...over,
  });
  return { clock, store, metrics, refusals, run: () => new IdentityLookups(deps()) };
}

const verdictsOf = (items: unknown[]) =>
  items.map((i) => (i as { _identity?: IdentityVerdict })._identity?.verdict);

const opts = { baselining: false, deadline: Date.now() + 600_000 };
const top = { exclusive: true };

describe('the identity step', () => {
  it('reaches each verdict by the five rules, and leaves logins outside every domain without one', async () => {
    const p = scripted();
    const answers: Record<string, LookupResult> = {
      'gone@acme.com': { answer: { found: false } },
      'off@acme.com': { answer: { found: true, account: account({ enabled: false }) } },
      'synced@acme.com': { answer: { found: true, account: account({ unmanaged: true }) } },
      'new@acme.com': {
        answer: { found: true, account: account({ passwordChangedAt: '2026-11-21T08:00:00Z' }) },
      },
      'old@acme.com': { answer: { found: true, account: account() } },
      'never@acme.com': { answer: { found: true, account: account({ passwordChangedAt: null }) } },
      'down@acme.com': { failed: 'HTTP 503' },
    };
    p.answer(async (login) => answers[login] as LookupResult);
    const s = await setup([p.client]);
    const logins = Object.keys(answers);
    const items = [...logins.map((l, i) => credential(i + 1, l)), credential(99, 'x@elsewhere.org')];
    const out = await s.run().cycle().verdicts(top, items, opts);
    expect(verdictsOf(out)).toEqual([
      'no_account',
      'disabled',
      'unknown',
      'rotated',
      'at_risk',
      'at_risk',
      'unknown',
      undefined,
    ]);
    const reasons = out.map((i) => (i as { _identity?: IdentityVerdict })._identity?.reason);
    expect(reasons[2]).toBe('unmanaged');
    expect(reasons[6]).toBe('unavailable');
    expect((out[4] as unknown as { _identity: IdentityVerdict })._identity).toMatchObject({
      provider: 'corp',
      userId: 'u1',
      displayName: 'Jane Doe',
      enabled: true,
      passwordChangedAt: '2026-03-01T00:00:00Z',
      leakDate: LEAK,
    });
  });

  it('a bare name is <name>@<domain>, and a subdomain of a provider domain is covered', async () => {
    const p = scripted();
    const s = await setup([p.client]);
    await s
      .run()
      .cycle()
      .verdicts(top, [credential(1, 'jane', { domain: 'acme.com' }), credential(2, 'bob@eu.acme.com')], opts);
    expect(p.calls.sort()).toEqual(['bob@eu.acme.com', 'jane@acme.com']);
  });

  it('45 leaks of one login cost one lookup; an hour later, one more; a failure is tried again after 5 minutes', async () => {
    const p = scripted();
    const s = await setup([p.client]);
    const run = s.run();
    const leaks = Array.from({ length: 45 }, (_, i) => credential(i + 1, 'jane@acme.com'));
    await run.cycle().verdicts(top, leaks, opts);
    expect(p.calls).toHaveLength(1);
    // Later cycles, other runs: the table's answer.
    await s
      .run()
      .cycle()
      .verdicts(top, [credential(100, 'JANE@acme.com')], opts);
    s.clock.advance(59 * 60_000);
    await s
      .run()
      .cycle()
      .verdicts(top, [credential(101, 'jane@acme.com')], opts);
    expect(p.calls).toHaveLength(1);
    s.clock.advance(2 * 60_000);
    await s
      .run()
      .cycle()
      .verdicts(top, [credential(102, 'jane@acme.com')], opts);
    expect(p.calls).toHaveLength(2);

    p.answer(async () => ({ failed: 'HTTP 503' }));
    await s
      .run()
      .cycle()
      .verdicts(top, [credential(200, 'bob@acme.com')], opts);
    s.clock.advance(4 * 60_000);
    await s
      .run()
      .cycle()
      .verdicts(top, [credential(201, 'bob@acme.com')], opts);
    expect(p.calls.filter((l) => l === 'bob@acme.com')).toHaveLength(1);
    s.clock.advance(2 * 60_000);
    await s
      .run()
      .cycle()
      .verdicts(top, [credential(202, 'bob@acme.com')], opts);
    expect(p.calls.filter((l) => l === 'bob@acme.com')).toHaveLength(2);
  });

  it('two runs at once may both look a login up, never more; pages of one run share a lookup in flight', async () => {
    const p = scripted();
    p.answer(async () => {
      await new Promise((r) => setTimeout(r, 50));
      return { answer: { found: true, account: account() } };
    });
    const s = await setup([p.client]);
    const one = s.run();
    const two = s.run();
    const page = (from: number) =>
      Array.from({ length: 10 }, (_, i) => credential(from + i, 'jane@acme.com'));
    const c1 = one.cycle();
    await Promise.all([
      c1.verdicts(top, page(1), opts),
      c1.verdicts(top, page(20), opts),
      two.cycle().verdicts(top, page(40), opts),
    ]);
    expect(p.calls.length).toBeLessThanOrEqual(2);
    expect(p.calls.length).toBeGreaterThanOrEqual(1);
  });

  it('a page asking for a login another page has just been answered for, not yet kept, gets that answer without waiting for the rest of that page', async () => {
    // Pages' lookups overlap (poll/stream.ts): page 1 has jane's answer while bob's is still out,
    // so it has kept neither in the table when page 2 asks for jane.
    const p = scripted();
    let answerBob = () => {};
    const bob = new Promise<void>((resolve) => {
      answerBob = resolve;
    });
    p.answer(async (login) => {
      if (login === 'bob@acme.com') await bob;
      return { answer: { found: true, account: account() } };
    });
    const s = await setup([p.client]);
    const cycle = s.run().cycle();
    const first = cycle.verdicts(top, [credential(1, 'jane@acme.com'), credential(2, 'bob@acme.com')], opts);
    for (let i = 0; i < 400 && p.calls.length < 2; i++) await new Promise((r) => setTimeout(r, 5));
    const second = await cycle.verdicts(top, [credential(3, 'jane@acme.com')], opts);
    answerBob();
    expect(verdictsOf(second)).toEqual(['at_risk']);
    expect(verdictsOf(await first)).toEqual(['at_risk', 'at_risk']);
    expect(p.calls.filter((l) => l === 'jane@acme.com')).toHaveLength(1);
  });

  it('an item keeps the verdict it was first routed with, though the account changes; a new item gets the new one', async () => {
    const p = scripted();
    const s = await setup([p.client]);
    const first = await s
      .run()
      .cycle()
      .verdicts(top, [credential(1, 'jane@acme.com')], opts);
    expect(verdictsOf(first)).toEqual(['at_risk']);
    s.clock.advance(2 * 3_600_000);
    p.answer(async () => ({ answer: { found: true, account: account({ enabled: false }) } }));
    const again = await s
      .run()
      .cycle()
      .verdicts(top, [credential(1, 'jane@acme.com'), credential(2, 'jane@acme.com')], opts);
    expect(verdictsOf(again)).toEqual(['at_risk', 'disabled']);
  });

  it('a shared stream: two runs deciding one item with different answers both route it with the first verdict stored', async () => {
    const a = scripted();
    const b = scripted();
    b.answer(async () => ({ answer: { found: false } }));
    const s = await setup([a.client]);
    const sb = { ...s };
    const runB = new IdentityLookups({
      store: s.store,
      providers: new Map([['top', [b.client]]]),
      fetch,
      now: () => Date.now(),
      logger: memoryLogger(),
      metrics: sb.metrics,
      refused: async () => {},
      accepted: async () => {},
    });
    const shared = { exclusive: false };
    const [x, y] = await Promise.all([
      s
        .run()
        .cycle()
        .verdicts(shared, [credential(7, 'jane@acme.com')], opts),
      runB.cycle().verdicts(shared, [credential(7, 'jane@acme.com')], opts),
    ]);
    expect(verdictsOf(x)).toEqual(verdictsOf(y));
  });

  it('a lookup over its time is unknown; once the cycle’s lookup time is spent no more are made, and the cycle’s time stays bounded', async () => {
    const p = scripted();
    p.answer(async (_login, signal) => hang(signal));
    const s = await setup([p.client], { lookupTimeoutMs: 100, cycleLookupMs: 450, concurrency: 2 });
    const items = Array.from({ length: 40 }, (_, i) => credential(i + 1, `user${i}@acme.com`));
    const started = Date.now();
    const out = await s.run().cycle().verdicts(top, items, opts);
    const took = Date.now() - started;
    expect(verdictsOf(out).every((v) => v === 'unknown')).toBe(true);
    // Five in a row failed: the provider rests; never more than the budget allows.
    expect(p.calls.length).toBeLessThanOrEqual(6);
    // Bounded, not hung: each lookup ends at its 100 ms (generous, for a busy machine).
    expect(took).toBeLessThan(5_000);
    expect(s.metrics.get('IdentityLookupFailures')).toBeGreaterThanOrEqual(5);
  });

  it('slow answers that succeed: lookups stop once the cycle’s lookup time is spent, the rest unknown', async () => {
    const p = scripted();
    p.answer(async () => {
      await new Promise((r) => setTimeout(r, 120));
      return { answer: { found: true, account: account() } };
    });
    const s = await setup([p.client], { cycleLookupMs: 400, concurrency: 1 });
    const items = Array.from({ length: 20 }, (_, i) => credential(i + 1, `user${i}@acme.com`));
    const cycle = s.run().cycle();
    const out = await cycle.verdicts(top, items.slice(0, 10), opts);
    const later = await cycle.verdicts(top, items.slice(10), opts);
    // A lookup takes 120 ms at least, so 400 ms of lookups hold at most 4 (and one cut short):
    // without the budget, all 20 would be made. The count, not the wall time, so a busy machine
    // cannot fail it.
    expect(p.calls.length).toBeGreaterThanOrEqual(1);
    expect(p.calls.length).toBeLessThanOrEqual(5);
    const all = verdictsOf([...out, ...later]);
    expect(all.filter((v) => v === 'at_risk')).toHaveLength(p.calls.length);
    expect(all.filter((v) => v === 'unknown')).toHaveLength(20 - p.calls.length);
    // A new cycle has its own time.
    await s
      .run()
      .cycle()
      .verdicts(top, [credential(50, 'fresh@acme.com')], opts);
    expect(p.calls).toContain('fresh@acme.com');
  });

  it('a provider that refuses our credentials is reported once a cycle, rests, and its logins are unknown', async () => {
    const p = scripted();
    p.answer(async () => ({
      refused: 'Entra ID corp answered HTTP 403 Authorization_RequestDenied: grant User.Read.All',
    }));
    const s = await setup([p.client]);
    const items = Array.from({ length: 12 }, (_, i) => credential(i + 1, `u${i}@acme.com`));
    const out = await s.run().cycle().verdicts(top, items, opts);
    expect(verdictsOf(out).every((v) => v === 'unknown')).toBe(true);
    expect(s.refusals).toHaveLength(1);
    expect(s.refusals[0]).toContain('User.Read.All');
    expect(p.calls.length).toBeLessThanOrEqual(8);
    expect(s.metrics.get('IdentityProviderRefused')).toBe(1);
  });

  it('a baseline walk looks nothing up, and a tenant without its own identity has none', async () => {
    const p = scripted();
    const s = await setup([p.client]);
    const run = s.run();
    const out = await run
      .cycle()
      .verdicts(top, [credential(1, 'jane@acme.com')], { ...opts, baselining: true });
    expect(verdictsOf(out)).toEqual([undefined]);
    const tenant = await run
      .cycle()
      .verdicts({ tenant: { id: 5, name: 'five' }, exclusive: true }, [credential(1, 'jane@acme.com')], opts);
    expect(verdictsOf(tenant)).toEqual([undefined]);
    expect(p.calls).toHaveLength(0);
  });

  it('the first provider in config order whose domains cover the login is asked', async () => {
    const a = scripted('corp', ['acme.com']);
    const b = scripted('shop', ['acme.io', 'acme.com']);
    const s = await setup([a.client, b.client]);
    const out = await s
      .run()
      .cycle()
      .verdicts(top, [credential(1, 'x@acme.com'), credential(2, 'y@acme.io')], opts);
    expect(a.calls).toEqual(['x@acme.com']);
    expect(b.calls).toEqual(['y@acme.io']);
    expect(out.map((i) => (i as { _identity?: IdentityVerdict })._identity?.provider)).toEqual([
      'corp',
      'shop',
    ]);
  });
});

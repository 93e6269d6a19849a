/** Upstream faults during a cycle: each ends with nothing lost and no stall. */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { type Receiver, startReceiver } from '../helpers/receiver.ts';
import { makeWorld } from '../helpers/world.ts';

const emu = useEmulator({ eventsPerTenant: 30, credentials: 100 });
const db = useDynalite();
let hook: Receiver;
const control = () => emu.running.emulator.control;

beforeAll(async () => {
  hook = await startReceiver();
});
afterAll(() => hook.close());
beforeEach(() => {
  hook.requests.length = 0;
  control().clearFaults();
});

const cfg = () => ({
  sources: {
    tenantEvents: { lookback: 'P7D' },
    credentials: { domains: ['example.com'], lookback: 'P60D', pageSize: 10 },
  },
  destinations: { hook: { type: 'webhook', url: hook.url } },
  routes: [{ name: 'all', match: {}, to: ['hook'] }],
});

function received(): string[] {
  return hook.requests.flatMap((r) => {
    const body = r.json() as { kind: string; items: { id?: number; metadata?: { uid: string } }[] };
    return body.items.map((i) => (body.kind === 'events' ? String(i.metadata?.uid) : String(i.id)));
  });
}
const allEvents = () =>
  emu.running.emulator.dataset
    .tenant('acme')
    .events.map((e) => e.item.metadata.uid)
    .sort();

describe('upstream faults', () => {
  it('a 429 longer than the budget stops the stream cleanly (exit 0), and the next run resumes', async () => {
    const world = await makeWorld(emu, db, cfg());
    // Let two pages through, then ask for a 30 s wait, longer than this cycle's budget.
    let seen = 0;
    world.runtime.poll.checkpoint = (step) => {
      if (step === 'page-fetched' && ++seen === 2)
        control().addFault({ endpoint: 'tenantEvents', status: 429, retryAfter: 30 });
    };
    const first = await world.cycle('events', 25);
    expect(first.streams[0]?.status).toBe('rate_limited');
    expect(first.exitCode).toBe(0);
    const partial = received().length;
    expect(partial).toBeGreaterThan(0);
    expect(partial).toBeLessThan(allEvents().length);
    world.runtime.poll.checkpoint = undefined;
    const second = await world.cycle('events');
    expect(second.streams[0]?.status).toBe('done');
    expect(received().sort()).toEqual(allEvents());
  });

  it('a request the time budget cuts short stops the stream cleanly (exit 0, budget), and the next run resumes', async () => {
    const world = await makeWorld(emu, db, cfg());
    // After the first page the upstream stops answering: the request in flight can only end with
    // the budget (its timeout, 30 s, is cut to what is left of it).
    let seen = 0;
    world.runtime.poll.checkpoint = (step) => {
      if (step === 'page-fetched' && ++seen === 1)
        control().addFault({ endpoint: 'tenantEvents', hang: true });
    };
    const first = await world.cycle('events', 4);
    expect(first.streams[0]?.status).toBe('budget');
    expect(first.streams[0]?.error?.message).toMatch(
      /tenantEvents: no answer within \d+ ms, the rest of the time budget/,
    );
    expect(first.exitCode).toBe(0);
    world.runtime.poll.checkpoint = undefined;
    control().clearFaults();
    const second = await world.cycle('events');
    expect(second.streams[0]?.status).toBe('done');
    expect(received().sort()).toEqual(allEvents());
  });

  it('5xx answers are retried and the cycle completes', async () => {
    const world = await makeWorld(emu, db, cfg());
    control().addFault({ endpoint: 'tenantEvents', status: 503, times: 2 });
    control().addFault({ endpoint: 'globalCredentials', status: 500 });
    const events = await world.cycle('events');
    const creds = await world.cycle('credentials');
    expect(events.streams[0]?.status).toBe('done');
    expect(creds.streams[0]?.status).toBe('done');
    expect(
      received()
        .filter((k) => k.includes('/'))
        .sort(),
    ).toEqual(allEvents());
  });

  it('an upstream that stays down fails the stream (exit 1) and the next run resumes', async () => {
    const world = await makeWorld(emu, db, cfg());
    control().addFault({ endpoint: 'tenantEvents', status: 502, times: 50 });
    const down = await world.cycle('events', 5);
    expect(down.exitCode).toBe(1);
    expect(down.streams[0]?.status).toBe('failed');
    control().clearFaults();
    await world.cycle('events');
    expect(received().sort()).toEqual(allEvents());
  });

  it('a malformed item is quarantined with its field named and a masked password; its page goes on', async () => {
    const world = await makeWorld(emu, db, cfg());
    control().addFault({ endpoint: 'globalCredentials', badItem: true, index: 3 });
    const summary = await world.cycle('credentials');
    const stream = summary.streams[0];
    expect(stream?.status).toBe('done');
    expect(stream?.quarantined).toBe(1);
    expect(world.metrics.get('QuarantinedItems')).toBe(1);
    const quarantined = await world.runtime.quarantine.list('credentials:example.com');
    expect(quarantined).toHaveLength(1);
    expect(quarantined[0]?.issues).toMatch(/imported_at/);
    const expectedCreds = emu.running.emulator.dataset.credentials.filter((c) =>
      /(^|\.)example\.com$/.test(c.domain),
    );
    const bad = expectedCreds.find((c) => String(c.id) === quarantined[0]?.key);
    expect(bad).toBeDefined();
    // Whatever its hash type, the raw item's password is not stored in the clear.
    expect(quarantined[0]?.rawJson).not.toContain(`"${bad?.hash}"`);
    expect(world.logs.some((l) => l.includes('item quarantined') && l.includes('imported_at'))).toBe(true);
    // Every other credential went out; the stream did not stall.
    const got = new Set(received());
    for (const c of expectedCreds)
      if (String(c.id) !== quarantined[0]?.key) expect(got.has(String(c.id))).toBe(true);
  });

  it('an upstream 401 stops the cycle with exit code 3 and an error an operator can see', async () => {
    const world = await makeWorld(emu, db, cfg(), { token: 'revoked-token' });
    const summary = await world.cycle('events');
    expect(summary.exitCode).toBe(3);
    expect(summary.streams[0]?.status).toBe('unauthorized');
    expect(
      world.logs.some((l) => l.includes('"level":"error"') && l.includes('rejected the credentials')),
    ).toBe(true);
  });
});

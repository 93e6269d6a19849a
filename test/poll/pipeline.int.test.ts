/**
 * The pipelined poll cycle: an item that shows up on two pages in flight at once is recorded and
 * sent once; records of inline webhook deliveries read back whole through `deliveries list`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AlertReader } from '../../lib/state/alert-list.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { type Receiver, startReceiver } from '../helpers/receiver.ts';
import { makeWorld } from '../helpers/world.ts';

const emu = useEmulator({ eventsPerTenant: 40, credentials: 50 });
const db = useDynalite();
let hook: Receiver;
beforeAll(async () => {
  hook = await startReceiver();
});
afterAll(() => hook.close());

const config = () => ({
  sources: { tenantEvents: { lookback: 'P7D' } },
  destinations: { hook: { type: 'webhook', url: hook.url } },
  routes: [{ name: 'all', match: {}, to: ['hook'] }],
});

function uids(): string[] {
  return hook.requests.flatMap((r) =>
    (r.json() as { items: { metadata: { uid: string } }[] }).items.map((i) => i.metadata.uid),
  );
}

describe('pipelined pages', () => {
  it('an item repeated on a later page (written concurrently) is recorded and sent once', async () => {
    const tenant = emu.running.emulator.dataset.tenant('globex');
    // The upstream re-lists early events: once on the same page, and on the next pages, which are
    // written at the same time as the first (no added latency, so pages arrive back to back).
    const copy = (i: number) => structuredClone(tenant.events[i] as (typeof tenant.events)[number]);
    tenant.events.splice(5, 0, copy(0));
    tenant.events.splice(12, 0, copy(1), copy(2));
    tenant.events.splice(25, 0, copy(3));
    for (const [i, e] of tenant.events.entries()) e.seq = i + 1;
    emu.running.emulator.control.latencyMs = 0;
    try {
      const world = await makeWorld(emu, db, config(), { token: 'emu-globex-token' });
      const summary = await world.cycle('events');
      const distinct = new Set(tenant.events.map((e) => e.item.metadata.uid));
      expect(summary.streams[0]?.items).toBe(tenant.events.length);
      expect(summary.streams[0]?.newItems).toBe(distinct.size);
      const got = uids();
      expect(got).toHaveLength(distinct.size);
      expect(new Set(got).size).toBe(distinct.size);
      const records = await world.runtime.deliveries.list({ limit: 1_000 });
      expect(records).toHaveLength(distinct.size);
    } finally {
      emu.running.emulator.control.latencyMs = 0;
    }
  });

  it('inline-sent records read back with their routes, attempts and times', async () => {
    hook.requests.length = 0;
    const world = await makeWorld(emu, db, config());
    const summary = await world.cycle('events');
    expect(summary.streams[0]?.sent).toBeGreaterThan(0); // delivered while polling
    const sent = await world.runtime.deliveries.list({ status: 'sent', limit: 1_000 });
    expect(sent).toHaveLength(emu.running.emulator.dataset.tenant('acme').events.length);
    for (const r of sent) {
      expect(r.destination).toBe('hook');
      expect(r.kind).toBe('event');
      expect(r.routes).toEqual(['all']);
      expect(r.attempts).toBe(1);
      expect(Date.parse(r.sentAt ?? '')).toBeGreaterThan(0);
      expect(r.expiresAt).toBeGreaterThan(Date.now() / 1000 + 89 * 86_400);
      expect(r.id).toBe(`hook~event~${r.key}`);
    }
  });
});

describe('each optimisation off, and the alert index (the bench switches)', () => {
  // Turning one off must change the cost, never the outcome: every item once, nothing lost. The
  // alert index off leaves the console's list empty, and only that.
  it.each([['packs'], ['claimMark'], ['inline'], ['pipeline'], ['alertIndex']] as const)(
    'without %s, every event and credential is sent once, and a second cycle sends nothing',
    async (name) => {
      hook.requests.length = 0;
      const world = await makeWorld(
        emu,
        db,
        {
          sources: {
            tenantEvents: { lookback: 'P7D' },
            credentials: { domains: ['acme.test'], lookback: 'P60D' },
          },
          destinations: { hook: { type: 'webhook', url: hook.url } },
          routes: [{ name: 'all', match: {}, to: ['hook'] }],
        },
        { optimisations: { [name]: false } },
      );
      await world.cycle('events');
      await world.cycle('credentials');
      const keys = () =>
        hook.requests.flatMap((r) => {
          const body = r.json() as { kind: string; items: { id?: number; metadata?: { uid: string } }[] };
          return body.items.map((i) => (body.kind === 'events' ? `e:${i.metadata?.uid}` : `c:${i.id}`));
        });
      const first = keys();
      const tenant = emu.running.emulator.dataset.tenant('acme');
      const credentials = emu.running.emulator.dataset.credentials.filter((c) =>
        /(^|\.)acme\.test$/.test(c.domain),
      );
      expect(new Set(first).size).toBe(first.length);
      expect(first.filter((k) => k.startsWith('e:'))).toHaveLength(tenant.events.length);
      expect(first.filter((k) => k.startsWith('c:'))).toHaveLength(credentials.length);
      await world.cycle('events');
      await world.cycle('credentials');
      expect(keys()).toHaveLength(first.length);
      const { runtime } = world;
      const io = { client: runtime.dynamo, tableName: runtime.env.tableName, clock: runtime.poll.clock };
      const listed = (await new AlertReader(io).page({}, undefined)).items.length;
      if (name === 'alertIndex') expect(listed).toBe(0);
      else expect(listed).toBeGreaterThan(0);
    },
  );
});

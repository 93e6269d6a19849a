/**
 * Tenants share a destination fairly (docs/configuration.md), on real dynalite and the emulator
 * over HTTP: each tenant has its own queue partition per destination, the pass reads them in turns
 * (a tenant's backlog larger than a chunk cannot keep another's records out of it), and the
 * messages of a chunk go in turns, so one tenant's flood does not delay another's alerts. Deliveries
 * list, re-queue and status see every partition.
 */
import { describe, expect, it } from 'vitest';
import { MSSP_API_KEY } from '../../lib/emulator/dataset.ts';
import { DeliveryRecords, type NewDelivery } from '../../lib/state/records/index.ts';
import { StatusReader } from '../../lib/state/status.ts';
import { fakeClock, skipClock } from '../helpers/clock.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { type Receiver, useReceivers } from '../helpers/receiver.ts';
import { makeWorld } from '../helpers/world.ts';

const emu = useEmulator({ eventsPerTenant: 12, lateMatchesPerTenant: 0, credentials: 0 });
const db = useDynalite();
const receiver = useReceivers();

const record = (key: string, source: string): NewDelivery => ({
  destination: 'soc',
  kind: 'event',
  key,
  source,
  routes: ['all'],
  item: { metadata: { uid: key } },
  status: 'pending',
});

describe('tenants sharing a destination', () => {
  it("a tenant's backlog over a chunk leaves room for the other's records, read in turns", async () => {
    const clock = fakeClock();
    const store = new DeliveryRecords(db.client, await db.table(), clock, { tenants: [1002, 1003] });
    const flood = Array.from({ length: 400 }, (_, i) => record(`1002:e/o/${i}`, 'tenant:1002'));
    await store.recordPage(flood, { exclusive: true });
    clock.advance(1_000);
    await store.recordPage([record('1003:e/o/x', 'tenant:1003'), record('1003:e/o/y', 'tenant:1003')], {
      exclusive: true,
    });
    clock.advance(1_000);
    const due = await store.queue.due('soc', 200);
    expect(due).toHaveLength(200);
    // The other tenant's two, though newer than the whole backlog, come second and fourth.
    expect(due.slice(0, 4).map((r) => r.source)).toEqual([
      'tenant:1002',
      'tenant:1003',
      'tenant:1002',
      'tenant:1003',
    ]);
    // Listing and the status counts see every partition; a dead one goes back to its own.
    const listed = await store.queue.list({ status: 'pending', destinations: ['soc'], limit: 1_000 });
    expect(listed).toHaveLength(402);
    const [one] = due.filter((r) => r.source === 'tenant:1003');
    await store.queue.save([{ ...(one as (typeof due)[number]), status: 'dead' }]);
    expect(await store.queue.requeue(one?.id ?? '')).toBe(true);
    expect((await store.queue.due('soc', 1_000)).filter((r) => r.source === 'tenant:1003')).toHaveLength(2);
  });

  it("one tenant's flood does not hold back another's alerts: the messages go in turns", async () => {
    const hook: Receiver = await receiver();
    const world = await makeWorld(
      emu,
      db,
      {
        tenants: [
          { id: 1002, name: 'Globex', sources: { tenantEvents: { lookback: 'P30D' } } },
          { id: 1003, name: 'Initech', sources: { tenantEvents: { lookback: 'P30D' } } },
        ],
        destinations: { soc: { type: 'slack', url: hook.url } },
        routes: [{ name: 'all', to: ['soc'] }],
        // Every event its own message, at Slack's pace of one a second.
        digest: { threshold: 1_000, maxItems: 20 },
      },
      { apiKey: MSSP_API_KEY.key, clock: skipClock() },
    );
    // Globex floods: many more new events than Initech has.
    emu.running.emulator.dataset.appendEvents(1002, 30);
    const summary = await world.cycle('events', 600);
    expect(summary.exitCode).toBe(0);
    const tenants = hook.requests.map((r) => {
      const header = (r.json() as { blocks: { type: string; text?: { text: string } }[] }).blocks[0];
      return /Globex|Initech/.exec(header?.text?.text ?? '')?.[0];
    });
    const initech = emu.running.emulator.dataset.tenant(1003).events.length;
    expect(tenants.filter((t) => t === 'Initech')).toHaveLength(initech);
    // Initech's last message goes out while Globex still has most of its flood to send.
    const lastInitech = tenants.lastIndexOf('Initech');
    expect(lastInitech).toBeLessThan(2 * initech + 1);
    expect(tenants.slice(0, 2 * initech).filter((t) => t === 'Globex').length).toBe(initech);
    // status: the streams by tenant, and the pending of both partitions counted.
    const status = await new StatusReader(
      { client: db.client, tableName: world.table, clock: skipClock() },
      { active: async () => [] },
    ).read();
    expect(status.streams.map((s) => s.tenant?.name)).toEqual(['Globex', 'Initech']);
  });
});

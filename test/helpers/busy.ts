/**
 * A busy table for `status` tests: what pollers and delivery passes leave behind, written through
 * the product's own stores on real dynalite. Four streams (two polled, one failed), three
 * destinations (more pending deliveries than one count page reads, dead ones, one refusing), a
 * quota reading, run-time silences (active and expired) and a config silence.
 */
import { randomUUID } from 'node:crypto';
import { QuotaStore } from '../../lib/state/quota.ts';
import { newSilenceId } from '../../lib/state/silences.ts';
import { type DeliveryWorld, deliveryWorld } from '../deliver/seed.ts';
import type { DynamoFixture } from './dynamo.ts';

export const BUSY_CONFIG = {
  sources: {
    tenantEvents: {},
    identifierGroups: [{ id: 12 }, { id: 13 }],
    credentials: { domains: ['acme.test'] },
  },
  destinations: {
    soc: { type: 'webhook', url: 'http://127.0.0.1:9/soc' },
    siem: { type: 'webhook', url: 'http://127.0.0.1:9/siem' },
    pager: { type: 'webhook', url: 'http://127.0.0.1:9/pager' },
  },
  routes: [{ name: 'all', to: ['soc', 'siem', 'pager'] }],
  silences: [{ match: { types: ['paste'] }, until: '2099-01-01T00:00:00Z', reason: 'a config silence' }],
};

/** More than one count page (1,000 items at most, and 1 MB) can hold. */
export const BUSY_PENDING = 1_100;
export const BUSY_DEAD = 3;
export const BUSY_QUOTA = { remaining: 4_321, at: '2026-11-23T00:00:00.000Z' };

export async function seedBusyTable(db: DynamoFixture, table?: string): Promise<DeliveryWorld> {
  const world = await deliveryWorld(db, BUSY_CONFIG, table ? { table } : {});
  const { runtime } = world;
  await runtime.cycle.publish?.();
  // Batch-written: a conditional put each (a shared stream's way) took about 15 s of CPU here.
  await world.seed('soc', BUSY_PENDING, { exclusive: true });
  const dead = await world.seed('siem', BUSY_DEAD, { from: 10_000 });
  const records = await runtime.deliveries.getMany(dead);
  await runtime.deliveries.save(
    [...records.values()].map((r) => ({
      ...r,
      status: 'dead' as const,
      lastError: 'HTTP 400: no such hook',
    })),
  );
  const owner = `test-${randomUUID()}`;
  const pager = await runtime.destinationState.acquire('pager', owner);
  if (!pager) throw new Error('pager lease taken');
  await runtime.destinationState.markRefused(pager, 'http_400', new Date());
  await runtime.destinationState.release(pager);
  for (const [stream, result, lag] of [
    ['tenant', 'done', 42.5],
    ['group:12', 'failed', undefined],
  ] as const) {
    const lease = await runtime.streams.acquire(stream, owner);
    if (!lease) throw new Error(`${stream} lease taken`);
    await runtime.streams.release(lease, result, true, lag);
  }
  await new QuotaStore(runtime.dynamo, world.table).write(BUSY_QUOTA);
  const now = Date.now();
  for (const [i, reason] of ['first', 'second', 'ended by hand'].entries()) {
    await runtime.silences.create({
      id: newSilenceId(now + i),
      match: { kind: 'credential' },
      until: new Date(now + 3_600_000).toISOString(),
      reason,
      createdBy: 'cli:test',
      createdAt: new Date(now).toISOString(),
    });
  }
  const ended = (await runtime.silences.active()).find((s) => s.reason === 'ended by hand');
  if (!ended) throw new Error('silence not stored');
  await runtime.silences.expire(ended.id, 'cli:test');
  return world;
}

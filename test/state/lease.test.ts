/**
 * Leases with fencing (lib/state/lease.ts) on real dynalite, and keepAlive's report of a renewal
 * that fails: lost to another run, or failed for another reason.
 */
import { describe, expect, it } from 'vitest';
import {
  keepAlive,
  type Lease,
  LeaseLostError,
  LeaseRenewalError,
  LeaseStore,
} from '../../lib/state/lease.ts';
import { fakeClock } from '../helpers/clock.ts';
import { useDynalite } from '../helpers/dynamo.ts';

const db = useDynalite();

describe('leases', () => {
  it('one holder at a time; a lapsed lease is taken over with a higher fence, and the old holder is fenced out', async () => {
    const clock = fakeClock();
    const leases = new LeaseStore(db.client, await db.table(), clock);
    const a = await leases.acquire('stream#x', 'state', 'run-a');
    expect(a?.fence).toBe(1);
    expect(await leases.acquire('stream#x', 'state', 'run-b')).toBeUndefined();
    await leases.update(a!, { set: { cursorNext: 'c1' } });
    clock.advance(59_000);
    expect(await leases.acquire('stream#x', 'state', 'run-b')).toBeUndefined(); // renewed by the update
    clock.advance(61_000);
    const b = await leases.acquire('stream#x', 'state', 'run-b');
    expect(b?.fence).toBe(2);
    expect(b?.item.cursorNext).toBe('c1');
    await expect(leases.update(a!, { set: { cursorNext: 'stale' } })).rejects.toBeInstanceOf(LeaseLostError);
    expect(await leases.release(a!)).toBe(false);
    expect(await leases.release(b!, { set: { cursorNext: 'c2' } })).toBe(true);
    const c = await leases.acquire('stream#x', 'state', 'run-c');
    expect(c?.item.cursorNext).toBe('c2');
    expect(c?.fence).toBe(3);
  });
});

describe('keepAlive', () => {
  const aborted = (signal: AbortSignal) =>
    new Promise<unknown>((resolve) =>
      signal.addEventListener('abort', () => resolve(signal.reason), { once: true }),
    );

  it('a lease taken over by another run aborts with LeaseLostError', async () => {
    const clock = fakeClock();
    const leases = new LeaseStore(db.client, await db.table(), clock);
    const mine = (await leases.acquire('stream#y', 'state', 'run-a')) as Lease;
    clock.advance(61_000);
    await leases.acquire('stream#y', 'state', 'run-b');
    const alive = keepAlive(leases, mine, 20, clock);
    try {
      expect(await aborted(alive.signal)).toBeInstanceOf(LeaseLostError);
    } finally {
      alive.stop();
    }
  });

  it('a renewal that fails for another reason is tried again while there is time, then reported as what it is', async () => {
    // A renewal failure other than a lost lease (throttling, the network) cannot be made on dynalite.
    const clock = fakeClock();
    const lease: Lease = {
      pk: 'stream#z',
      sk: 'state',
      owner: 'me',
      fence: 1,
      expiresAt: clock.now() + 60_000,
      item: {},
    };
    let calls = 0;
    const failing = {
      renew: async () => {
        calls += 1;
        throw Object.assign(new Error('Rate of requests exceeds the allowed throughput.'), {
          name: 'ThrottlingException',
        });
      },
    } as unknown as LeaseStore;
    const alive = keepAlive(failing, lease, 20, clock);
    try {
      await new Promise((r) => setTimeout(r, 80));
      expect(calls).toBeGreaterThan(1);
      expect(alive.signal.aborted).toBe(false); // time to spare: tried again
      clock.advance(59_995);
      const reason = await aborted(alive.signal);
      expect(reason).toBeInstanceOf(LeaseRenewalError);
      expect(reason).not.toBeInstanceOf(LeaseLostError);
      expect((reason as Error).message).toMatch(
        /could not renew the lease on stream#z \(.*exceeds the allowed throughput/,
      );
    } finally {
      alive.stop();
    }
  });
});

/**
 * Splunk HEC through the whole product (the emulator and dynalite over HTTP, the HEC stand-in):
 * every item once as one event with its key, kind, severity and routes, many to a request under
 * 1 MB; each answer class; a crash between send and record repeats at most that one request (HEC
 * has no dedupe: the key is in each event for a search to dedupe); no cleartext password.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventItem } from '../../../lib/upstream/schemas.ts';
import { skipClock } from '../../helpers/clock.ts';
import { useDynalite } from '../../helpers/dynamo.ts';
import { useEmulator } from '../../helpers/emulator.ts';
import { crashingOnce, expectNoPassword, oneDestination } from '../../helpers/one-destination.ts';
import { HEC_TOKEN, type HecStandIn, startHec } from '../../helpers/splunk.ts';
import { makeWorld } from '../../helpers/world.ts';

const emu = useEmulator({ eventsPerTenant: 30, lateMatchesPerTenant: 0, credentials: 80 });
const db = useDynalite();
let hec: HecStandIn;
beforeAll(async () => {
  hec = await startHec();
});
afterAll(() => hec.close());

const uids = () =>
  emu.running.emulator.dataset
    .tenant('acme')
    .events.map((e) => (e.item as unknown as EventItem).metadata.uid);

async function setUp(options: { token?: string; credentials?: boolean; passwords?: string } = {}) {
  hec.events.length = 0;
  hec.requests.length = 0;
  return makeWorld(
    emu,
    db,
    // Digests do not apply to a SIEM, whatever the threshold.
    oneDestination(
      'splunk',
      { type: 'splunk', url: hec.url, token: { secret: 'hec' }, index: 'security' },
      { credentials: options.credentials, passwords: options.passwords, threshold: 2 },
    ),
    { secrets: { hec: options.token ?? HEC_TOKEN }, clock: skipClock() },
  );
}

describe('Splunk HEC', () => {
  it('every item once, as one event each, with its key, kind, severity and routes', async () => {
    const world = await setUp();
    const summary = await world.cycle('events');
    expect(summary.delivery.sent).toBe(uids().length);
    expect(hec.events.map((e) => e.event.key).sort()).toEqual([...uids()].sort());
    for (const e of hec.events) {
      expect(e).toMatchObject({ sourcetype: 'exposure_alerts', index: 'security' });
      expect(e.event).toMatchObject({ kind: 'event', routes: ['all'], destination: 'splunk' });
      expect(typeof e.time).toBe('number');
    }
    expect(hec.requests.every((r) => r.bytes < 1_000_000)).toBe(true);
  });

  it('answers: code 6 dead, a wrong token dead and refusing, code 9 retried', async () => {
    const world = await setUp();
    hec.script({ status: 503, body: { text: 'Server is busy', code: 9 } });
    const first = await world.cycle('events');
    expect(first.delivery.destinations[0]?.retrying).toBeGreaterThan(0);
    const waiting = await world.runtime.deliveries.list({ status: 'pending', destinations: ['splunk'] });
    expect(waiting[0]?.lastError).toContain('Server is busy');
    const bad = await setUp();
    hec.script({ status: 400, body: { text: 'Invalid data format', code: 6 } });
    await bad.cycle('events');
    const dead = await bad.runtime.deliveries.list({ status: 'dead', destinations: ['splunk'] });
    expect(dead[0]?.lastError).toContain('Invalid data format');
    const refused = await setUp({ token: 'wrong' });
    await refused.cycle('events');
    expect((await refused.runtime.destinationState.peek('splunk')).refused).toBeDefined();
  });

  it('a crash between send and record: that one request again, and no item lost', async () => {
    const world = await setUp();
    await crashingOnce(world, () => world.cycle('events'));
    await world.deliver();
    const keys = hec.events.map((e) => String(e.event.key));
    expect(new Set(keys)).toEqual(new Set(uids()));
    // At most the one request in flight repeated: a search dedupes by key.
    expect(keys.length).toBeLessThanOrEqual(uids().length * 2);
    const sent = await world.runtime.deliveries.list({ status: 'sent', destinations: ['splunk'] });
    expect(sent).toHaveLength(uids().length);
  });

  it('no cleartext password, masked or hidden', async () => {
    for (const passwords of ['masked', 'hidden']) {
      const world = await setUp({ credentials: true, passwords });
      await world.cycle('credentials');
      expect(hec.events.length).toBeGreaterThan(0);
      expectNoPassword(
        JSON.stringify(hec.events),
        emu.running.emulator.dataset.credentials.filter((c) => c.domain === 'acme.test'),
      );
    }
  });
});

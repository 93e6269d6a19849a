/**
 * Microsoft Sentinel through the whole product (the emulator and dynalite over HTTP, the Sentinel
 * stand-in: Entra's token endpoint and the Logs Ingestion API): every item once as one record, the
 * token bought once and reused until shortly before it expires, each refusal class, a crash
 * repeating at most the one request, no password, and neither the client secret nor the token in a
 * log line or a record.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventItem } from '../../../lib/upstream/schemas.ts';
import { skipClock } from '../../helpers/clock.ts';
import { useDynalite } from '../../helpers/dynamo.ts';
import { useEmulator } from '../../helpers/emulator.ts';
import { crashingOnce, expectNoPassword, oneDestination } from '../../helpers/one-destination.ts';
import { SENTINEL_APP, type SentinelStandIn, startSentinel } from '../../helpers/sentinel.ts';
import { makeWorld } from '../../helpers/world.ts';

const emu = useEmulator({ eventsPerTenant: 4, lateMatchesPerTenant: 0, credentials: 40 });
const db = useDynalite();
let az: SentinelStandIn;
beforeAll(async () => {
  az = await startSentinel();
});
afterAll(() => az.close());

const uids = () =>
  emu.running.emulator.dataset
    .tenant('acme')
    .events.map((e) => (e.item as unknown as EventItem).metadata.uid);

/** Each world its own rule (the token cache is per app and secret: worlds with one app share it). */
let app = 0;
async function setUp(
  options: { secret?: string; clientId?: string; credentials?: boolean; passwords?: string } = {},
) {
  az.records.length = 0;
  az.uploads.length = 0;
  az.tokenRequests = 0;
  app += 1;
  return makeWorld(
    emu,
    db,
    oneDestination(
      'sentinel',
      {
        type: 'sentinel',
        tenantId: SENTINEL_APP.tenantId,
        clientId: options.clientId ?? SENTINEL_APP.clientId,
        clientSecret: { secret: 'az' },
        endpoint: `${az.url}/`,
        ruleId: `dcr-${app}`,
        stream: 'Custom-ExposureAlerts_CL',
        loginUrl: az.url,
      },
      { credentials: options.credentials, passwords: options.passwords, threshold: 2 },
    ),
    { secrets: { az: options.secret ?? SENTINEL_APP.clientSecret }, clock: skipClock() },
  );
}

describe('Microsoft Sentinel', () => {
  it('every item once as one record; the token bought once and reused; nothing secret logged', async () => {
    const world = await setUp();
    const summary = await world.cycle('events');
    expect(summary.delivery.sent).toBe(uids().length);
    expect(az.records.map((r) => r.Key).sort()).toEqual([...uids()].sort());
    expect(az.records[0]).toMatchObject({ Kind: 'event', Routes: ['all'], Destination: 'sentinel' });
    expect(typeof az.records[0]?.TimeGenerated).toBe('string');
    expect(az.uploads.every((u) => u.status === 204 && u.bytes < 1_000_000)).toBe(true);
    const tokens = az.tokenRequests;
    expect(tokens).toBeGreaterThanOrEqual(1);
    const logs = world.logs.join('\n');
    expect(logs).not.toContain(SENTINEL_APP.clientSecret);
    expect(logs).not.toMatch(/token-\d+/);
  });

  it('the token is reused until a minute before it expires, then bought again', async () => {
    // An app of its own, so no earlier test's token is in the cache.
    const world = await setUp({ clientId: 'client-expiry' });
    az.tokenSeconds = 600;
    try {
      const opened = await world.cycle('events');
      expect(opened.delivery.sent).toBe(uids().length);
      const first = az.tokenRequests;
      emu.running.emulator.dataset.appendEvents(1001, 1);
      await world.cycle('events');
      expect(az.tokenRequests).toBe(first);
      // A 600 s token is given up 60 s early: 541 s on (this test's clock), the next send buys another.
      await world.runtime.deliver.clock.sleep(541_000);
      emu.running.emulator.dataset.appendEvents(1001, 1);
      await world.cycle('events');
      expect(az.tokenRequests).toBe(first + 1);
    } finally {
      az.tokenSeconds = 3_600;
    }
  });

  it('a wrong client secret: dead, the destination refusing, the secret never said', async () => {
    const world = await setUp({ secret: 'not-the-secret' });
    const summary = await world.cycle('events');
    expect(summary.delivery.destinations[0]?.dead).toBeGreaterThan(0);
    expect((await world.runtime.destinationState.peek('sentinel')).refused).toBeDefined();
    const dead = await world.runtime.deliveries.list({ status: 'dead', destinations: ['sentinel'] });
    expect(dead[0]?.lastError).toBe('Entra token: HTTP 401 invalid_client');
    expect(JSON.stringify(dead)).not.toContain('not-the-secret');
    expect(world.logs.join('\n')).not.toContain('not-the-secret');
  });

  it('answers: 403 dead, 429 paused without an attempt, 500 retried', async () => {
    const world = await setUp();
    az.script({ status: 429, retryAfter: 30 });
    const paused = await world.cycle('events');
    expect(paused.delivery.destinations[0]?.status).toBe('paused');
    const waiting = await world.runtime.deliveries.list({ status: 'pending', destinations: ['sentinel'] });
    expect(waiting.every((r) => r.attempts === 0)).toBe(true);
    const other = await setUp();
    az.script({ status: 500, body: { error: { code: 'InternalServerError' } } });
    const retried = await other.cycle('events');
    expect(retried.delivery.destinations[0]?.retrying).toBeGreaterThan(0);
    const third = await setUp();
    az.script({
      status: 403,
      body: { error: { code: 'OperationFailed', message: 'the app may not write to this rule' } },
    });
    await third.cycle('events');
    expect((await third.runtime.destinationState.peek('sentinel')).refused).toBeDefined();
  });

  it('a crash between send and record: that one request again, and no item lost', async () => {
    const world = await setUp();
    await crashingOnce(world, () => world.cycle('events'));
    await world.deliver();
    expect(new Set(az.records.map((r) => r.Key))).toEqual(new Set(uids()));
    const sent = await world.runtime.deliveries.list({ status: 'sent', destinations: ['sentinel'] });
    expect(sent).toHaveLength(uids().length);
  });

  it('no cleartext password, masked or hidden', async () => {
    for (const passwords of ['masked', 'hidden']) {
      const world = await setUp({ credentials: true, passwords });
      await world.cycle('credentials');
      expect(az.records.length).toBeGreaterThan(0);
      expectNoPassword(
        JSON.stringify(az.records),
        emu.running.emulator.dataset.credentials.filter((c) => c.domain === 'acme.test'),
      );
    }
  });
});

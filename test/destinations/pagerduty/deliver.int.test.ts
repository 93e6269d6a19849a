/**
 * Delivery to PagerDuty, end to end, against a real local stand-in for the Events API v2 enqueue
 * endpoint that validates and dedupes like PagerDuty (test/helpers/pagerduty-receiver.ts):
 * - the whole product (emulator over HTTP, poll cycle, dynalite) through a 429, a 500 and a crash
 *   between send and record: one incident per event, the one allowed repeat joined by dedup_key;
 * - a digest repeated after a crash joins its incident too;
 * - a 400 makes the deliveries dead with PagerDuty's `errors` in the record (and in `deliveries
 *   list`), reported once;
 * - at most 120 events a minute (500 ms apart) per routing key.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../../lib/cli/run.ts';
import type { Clock } from '../../../lib/clock.ts';
import { deliveryWorld } from '../../deliver/seed.ts';
import { skipClock } from '../../helpers/clock.ts';
import { useDynalite } from '../../helpers/dynamo.ts';
import { useEmulator } from '../../helpers/emulator.ts';
import { captureIo } from '../../helpers/io.ts';
import { TEST_ROUTING_KEY, usePagerDutyReceivers } from '../../helpers/pagerduty-receiver.ts';
import { makeWorld } from '../../helpers/world.ts';

const emu = useEmulator({ eventsPerTenant: 8, credentials: 0 });
const db = useDynalite();
const pagerduty = usePagerDutyReceivers();

class Crash extends Error {}

const gaps = (times: number[]) => times.slice(1).map((t, i) => t - (times[i] as number));

function destination(url: string, routingKey: unknown = { secret: 'pdKey' }) {
  return { type: 'pagerduty', url, routingKey };
}

describe('PagerDuty: exactly once through the whole product', () => {
  it('a 429, a 500 and a crash between send and record: one incident per event, the repeat joined', async () => {
    // The backoffs and the pace are taken on this clock, not waited out; the stand-in reads its
    // requests' times from it too, so the pace is checked on the product's own timeline.
    const clock = skipClock();
    const pd = await pagerduty({ now: clock.now });
    const world = await makeWorld(
      emu,
      db,
      {
        sources: { tenantEvents: { lookback: 'P30D' } },
        destinations: { pager: destination(pd.url) },
        routes: [{ name: 'everything', match: {}, to: ['pager'] }],
        digest: { threshold: 100, maxItems: 20 },
      },
      { secrets: { pdKey: TEST_ROUTING_KEY }, clock },
    );
    world.runtime.deliver.random = () => 0;
    const events = emu.running.emulator.dataset.tenant('acme').events;
    expect(events.length).toBeGreaterThan(3);

    // The cycle's pass meets a 429 (no Retry-After, as PagerDuty sends none): paused, no attempt.
    pd.script({ status: 429, body: '{"status":"throttle event"}' });
    const cycle = await world.cycle('events');
    expect(cycle.delivery.destinations[0]?.status).toBe('paused');
    expect(pd.requests).toHaveLength(1);
    const waiting = await world.runtime.deliveries.list({ status: 'pending', destinations: ['pager'] });
    expect(waiting).toHaveLength(events.length);
    expect(waiting.every((r) => r.attempts === 0)).toBe(true);

    // After the backoff: a 500 (retried later), then a crash after PagerDuty accepted an event.
    await clock.sleep(600);
    pd.script({ status: 500, body: '{"status":"error"}' });
    let crashed: string[] = [];
    world.runtime.deliver.checkpoint = (_step, ids) => {
      if (crashed.length === 0) {
        crashed = ids;
        throw new Crash('died after the send');
      }
    };
    const dying = await world.deliver();
    expect(dying.destinations[0]?.status).toBe('failed');
    expect(crashed).toHaveLength(1);
    world.runtime.deliver.checkpoint = undefined;

    // The next runs send the rest, the 500'd event, and the crashed one again.
    await clock.sleep(600);
    await world.deliver();
    const sent = await world.runtime.deliveries.list({ status: 'sent', destinations: ['pager'] });
    expect(sent).toHaveLength(events.length);
    // One attempt each, but the one that met the 500 (the 429 cost none).
    expect(sent.reduce((n, r) => n + r.attempts, 0)).toBe(events.length + 1);

    // PagerDuty: one incident per event, keyed event:<uid>; exactly one repeat, joined to its incident.
    expect(pd.alerts.map((a) => a.dedupKey).sort()).toEqual(
      events.map((e) => `event:${e.item.metadata.uid}`).sort(),
    );
    expect(pd.alerts.every((a) => a.routingKey === TEST_ROUTING_KEY && a.open)).toBe(true);
    const joined = pd.alerts.filter((a) => a.joined > 0);
    expect(joined.map((a) => [a.dedupKey, a.joined])).toEqual([
      [`event:${crashed[0]?.replace('pager~event~', '')}`, 1],
    ]);
    expect(pd.requests.filter((r) => r.status === 202)).toHaveLength(events.length + 1);
    // No pass sent two events to the routing key less than 500 ms apart (on the product's clock).
    for (const gap of gaps(pd.requests.map((r) => r.at))) expect(gap).toBeGreaterThanOrEqual(490);
    expect(world.metrics.get('DeliveriesSent')).toBe(events.length);
  }, 60_000);
});

/** `deliveries list --status dead` through the real CLI, on the world's table. */
async function listDead(table: string, url: string, routingKey: string) {
  const dir = await mkdtemp(join(tmpdir(), 'ea-pd-'));
  const config = join(dir, 'config.json');
  const secrets = join(dir, 'secrets.json');
  await writeFile(
    config,
    JSON.stringify({ destinations: { pager: destination(url) }, routes: [{ name: 'all', to: ['pager'] }] }),
  );
  await writeFile(secrets, JSON.stringify({ pdKey: routingKey }));
  const io = captureIo({
    EXPOSURE_API_URL: emu.url,
    EXPOSURE_API_TOKEN: 'emu-acme-token',
    DYNAMODB_ENDPOINT: db.endpoint,
    TABLE_NAME: table,
    ALERTS_CONFIG: config,
    SECRETS_FILE: secrets,
    LOG_LEVEL: 'error',
    // Wide enough for the whole error: at 80 columns the table cuts it with `…`.
    COLUMNS: '1000',
  });
  const code = await runCli(['deliveries', 'list', '--status', 'dead'], io);
  return { code, out: io.out, err: io.err };
}

describe('PagerDuty delivery', () => {
  async function setup(
    count: number,
    extra: Record<string, unknown> = {},
    routingKey = TEST_ROUTING_KEY,
    clock?: Clock,
  ) {
    const pd = await pagerduty(clock ? { now: clock.now } : {});
    const world = await deliveryWorld(
      db,
      {
        destinations: { pager: destination(pd.url), ops: { type: 'console' } },
        routes: [{ name: 'all', match: {}, to: ['pager'] }],
        digest: { threshold: 100, maxItems: 20 },
        ops: { to: ['ops'] },
        ...extra,
      },
      { secrets: { pdKey: routingKey }, ...(clock ? { clock } : {}) },
    );
    world.runtime.deliver.random = () => 0;
    await world.seed('pager', count);
    return { pd, world };
  }

  it('a digest repeated after a crash carries the same dedup_key and joins its incident', async () => {
    const { pd, world } = await setup(12, { digest: { threshold: 5, maxItems: 20 } });
    let crashes = 0;
    world.runtime.deliver.checkpoint = () => {
      if (crashes++ === 0) throw new Crash('died after the send');
    };
    await world.pass();
    world.runtime.deliver.checkpoint = undefined;
    expect((await world.pass()).sent).toBe(12);
    expect(pd.requests).toHaveLength(2);
    expect(pd.alerts).toHaveLength(1);
    expect(pd.alerts[0]?.joined).toBe(1);
    expect(pd.alerts[0]?.dedupKey).toMatch(/^[0-9a-f]{64}$/);
  }, 20_000);

  it("a 400 makes the deliveries dead with PagerDuty's errors in the record, and is reported once", async () => {
    // A routing key of the wrong length: the stand-in refuses it as PagerDuty does.
    // The pace between the refused sends is taken on this clock, not waited out.
    const { pd, world } = await setup(3, {}, 'too-short-key', skipClock());
    const summary = await world.pass();
    expect(summary.dead).toBe(3);
    expect(pd.requests.map((r) => r.status)).toEqual([400, 400, 400]);
    const dead = await world.runtime.deliveries.list({ status: 'dead', destinations: ['pager'] });
    expect(dead).toHaveLength(3);
    for (const r of dead) {
      expect(r.attempts).toBe(1);
      expect(r.lastError).toBe(
        "HTTP 400 invalid event: Event object is invalid; errors: 'routing_key' must be a 32-character string",
      );
    }
    const notices = world.console.filter((line) => line.includes('refuses deliveries'));
    expect(notices).toHaveLength(1);
    expect(notices[0]).toContain('"pager" (pagerduty)');
    expect(world.metrics.get('DestinationRefused')).toBe(1);
    expect(world.metrics.get('DeliveriesDead')).toBe(3);
    // The routing key is a secret: not in the notice, the records or the logs.
    expect([...world.console, ...world.logs, ...dead.map((r) => r.lastError)].join('\n')).not.toContain(
      'too-short-key',
    );
    // `deliveries list` shows them dead, with PagerDuty's errors.
    const listed = await listDead(world.table, pd.url, 'too-short-key');
    expect(listed.code, listed.err).toBe(0);
    const [header, ...lines] = listed.out.trimEnd().split('\n');
    expect(header).toMatch(/^ {2}ID +STATUS +TRIES /);
    expect(lines).toHaveLength(3);
    for (const line of lines) {
      expect(line).toMatch(/^ {2}pager~event~forum_post\/seed\/thread\/\d +dead +1 /);
      expect(line).toContain(
        "last error: HTTP 400 invalid event: Event object is invalid; errors: 'routing_key' must be",
      );
    }
    // Still refused on the next pass: dead again, but not reported again.
    await world.seed('pager', 2, { from: 10 });
    expect((await world.pass()).dead).toBe(2);
    expect(world.console.filter((line) => line.includes('refuses deliveries'))).toHaveLength(1);
  }, 20_000);

  it('5xx is retried with backoff: an attempt counted, the event sent once', async () => {
    const clock = skipClock();
    const { pd, world } = await setup(1, {}, TEST_ROUTING_KEY, clock);
    pd.script({ status: 503, body: '' });
    expect((await world.pass()).retrying).toBe(1);
    const [pending] = await world.runtime.deliveries.list({ status: 'pending', destinations: ['pager'] });
    expect(pending?.attempts).toBe(1);
    expect(Date.parse(pending?.nextAttemptAt ?? '') - clock.now()).toBeLessThanOrEqual(500);
    await clock.sleep(600);
    expect((await world.pass()).sent).toBe(1);
    expect(pd.alerts).toHaveLength(1);
    expect(pd.alerts[0]?.joined).toBe(0);
  }, 20_000);

  // In real time: the one test here whose pace is waited out, as a destination would see it.
  it('holds 120 events a minute per routing key: 500 ms apart', async () => {
    const { pd, world } = await setup(6);
    const started = Date.now();
    expect((await world.pass()).sent).toBe(6);
    const times = pd.requests.map((r) => r.at);
    for (const gap of gaps(times)) expect(gap).toBeGreaterThanOrEqual(490);
    expect(Date.now() - started).toBeGreaterThanOrEqual(2_450);
    expect(pd.alerts).toHaveLength(6);
  }, 20_000);
});

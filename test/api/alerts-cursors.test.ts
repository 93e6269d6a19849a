/**
 * `GET /alerts` with cursors nobody gave (section 5: never a 500): a sort key over DynamoDB's 1,024
 * bytes (ASCII, or multibyte text that is shorter in characters) is a 400 before any Query, since
 * DynamoDB refuses such a key with an error that would be a 500 (dynalite, which counts UTF-16
 * units and does not check a Query's bound, would answer); inside a pack, only the sort key
 * counts. Other odd positions (a count past a pack's end, a month long gone or far ahead, a lone
 * surrogate) answer 200. Real dynalite, the API app.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../lib/clock.ts';
import { DeliveryRecords, type NewDelivery } from '../../lib/state/records/index.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { type ApiUnderTest, bearer, buildApi } from './harness.ts';

const emu = useEmulator({ eventsPerTenant: 1, lateMatchesPerTenant: 0, credentials: 0 });
const db = useDynalite();
const now = Date.now();
const month = new Date(now).toISOString().slice(0, 7);
const cursorOf = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
let api: ApiUnderTest;

beforeAll(async () => {
  const table = await db.table();
  const page: NewDelivery[] = Array.from({ length: 3 }, (_, i) => ({
    destination: 'a',
    kind: 'event',
    key: `k/${i}`,
    source: 'tenant',
    routes: ['r'],
    status: 'pending',
    item: {
      metadata: { uid: `k/${i}`, type: 'leak', severity: 'high', matched_at: new Date(now).toISOString() },
    },
  }));
  await new DeliveryRecords(db.client, table, systemClock).recordPage(page, { exclusive: false });
  api = buildApi(emu, { table: { client: db.client, name: table } });
});

const status = async (cursor: unknown) =>
  (await api.app.request(`/alerts?cursor=${cursorOf(cursor)}`, { headers: bearer(api.tokens.runbook) }))
    .status;

describe('a cursor nobody gave', () => {
  it('whose sort key is over 1,024 bytes is refused (400)', async () => {
    const month7 = month.length;
    for (const b of [
      month + 'x'.repeat(1_025 - month7),
      month + '€'.repeat(360),
      `${month}${'€'.repeat(340)}\u00003`,
    ])
      expect(await status({ v: 1, m: month, b }), `${b.length} characters`).toBe(400);
  });

  it('otherwise answers 200, whatever position it names', async () => {
    for (const b of [
      month + 'x'.repeat(1_024 - month.length),
      `${month}${'x'.repeat(1_024 - month.length)}\u000099`,
      `${month}\u00001`,
      `${month}\u0000999999999999`,
      `${month}\u0000-1`,
      `${month}\ud800`,
      month,
    ])
      expect(await status({ v: 1, m: month, b }), JSON.stringify(b.slice(-12))).toBe(200);
    expect(await status({ v: 1, m: '0001-01' })).toBe(200);
    expect(await status({ v: 1, m: '9999-12' })).toBe(200);
  });
});

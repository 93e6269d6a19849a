/**
 * DynamoDB's limits, kept in bytes of UTF-8 (dynalite counts UTF-16 units, DynamoDB bytes): an item
 * too large for a record is cut to fit and still alerts, naming its cuts in `_trimmed`; a uid too
 * long for a key gets a key derived from a digest; neither stalls its stream.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dimensionValues } from '../../lib/metrics.ts';
import {
  cutUtf8,
  fitItem,
  fitKey,
  ITEM_BUDGET_BYTES,
  nameFromKey,
  nameInKey,
  PARTITION_KEY_BYTES,
  utf8Bytes,
} from '../../lib/state/limits.ts';
import { deliveryId, parseDeliveryId } from '../../lib/state/records/index.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { type Receiver, startReceiver } from '../helpers/receiver.ts';
import { makeWorld } from '../helpers/world.ts';

const bytes = (value: unknown) => utf8Bytes(JSON.stringify(value));

describe('fitItem', () => {
  it('leaves an item that fits untouched', () => {
    const item = { metadata: { uid: 'a/b/c' }, text: 'short' };
    expect(fitItem(item)).toBe(item);
  });

  it('cuts multibyte text by bytes, not characters, and names the cut', () => {
    // 150,000 characters but 450,000 bytes: fits by a UTF-16 count, not by DynamoDB's.
    const item = {
      metadata: { uid: 'leak/x/1' },
      highlights: { content: ['€'.repeat(150_000)] },
      title: 'kept',
    };
    const fitted = fitItem(item);
    expect(bytes(fitted)).toBeLessThanOrEqual(ITEM_BUDGET_BYTES);
    expect(fitted._trimmed).toEqual(['highlights.content[0]']);
    expect(fitted.title).toBe('kept');
    expect(fitted.highlights.content[0]).toMatch(/^€+ …\[trimmed\]$/);
    expect(item.highlights.content[0]).toHaveLength(150_000); // the input is not changed
  });

  it('cuts the longest fields first, several when one is not enough', () => {
    const item = { a: 'x'.repeat(400_000), b: 'y'.repeat(390_000), c: 'z'.repeat(1_000) };
    const fitted = fitItem(item);
    expect(bytes(fitted)).toBeLessThanOrEqual(ITEM_BUDGET_BYTES);
    expect(fitted._trimmed).toEqual(['a', 'b']);
    expect(fitted.c).toHaveLength(1_000);
  });

  it('shortens long lists when no string is long enough', () => {
    const item = { identifiers: Array.from({ length: 40_000 }, (_, i) => ({ id: i, name: `n${i}` })) };
    const fitted = fitItem(item);
    expect(bytes(fitted)).toBeLessThanOrEqual(ITEM_BUDGET_BYTES);
    expect(fitted._trimmed).toContain('identifiers');
    expect(fitted.identifiers.length).toBeGreaterThan(1);
  });
});

describe('fitKey and cutUtf8', () => {
  it('keeps a key that fits exactly as it was (records written before are still found)', () => {
    const key = `dlv#soc#event#${'a'.repeat(2_000)}`;
    expect(fitKey(key, PARTITION_KEY_BYTES)).toBe(key);
  });

  it('derives a long key from a digest, within the limit in bytes, distinct for distinct keys', () => {
    const a = fitKey(`dlv#soc#event#${'é'.repeat(3_000)}a`, PARTITION_KEY_BYTES);
    const b = fitKey(`dlv#soc#event#${'é'.repeat(3_000)}b`, PARTITION_KEY_BYTES);
    expect(utf8Bytes(a)).toBeLessThanOrEqual(PARTITION_KEY_BYTES);
    expect(a).not.toBe(b);
    expect(a).toMatch(/~sha256:[0-9a-f]{64}$/);
  });

  it('never cuts a character in half', () => {
    const cut = cutUtf8('a😀😀', 6);
    expect(cut).toBe('a😀');
    expect(utf8Bytes(cut)).toBe(5);
  });
});

describe('any destination name', () => {
  it('a name of letters, digits, _ and - keeps the keys it always had', () => {
    expect(nameInKey('soc_team-2')).toBe('soc_team-2');
    expect(deliveryId('soc_team-2', 'event', 'paste/x/1')).toBe('soc_team-2~event~paste/x/1');
  });

  it('separators in a name are encoded, and come back from an id unchanged', () => {
    const name = 'SOC #2 ~ équipe 100%';
    expect(nameInKey(name)).toBe('SOC %232 %7E équipe 100%25');
    expect(nameFromKey(nameInKey(name))).toBe(name);
    // Two names that would collide unencoded ("a#event" + key "x" against "a" + key "event#x").
    expect(deliveryId('a~event', 'event', 'x')).not.toBe(deliveryId('a', 'event', 'event~x'));
    expect(parseDeliveryId(deliveryId(name, 'credential', '42'))).toEqual({
      destination: name,
      kind: 'credential',
      key: '42',
    });
  });

  it('a metric dimension of any name is printable ASCII within CloudWatch limits', () => {
    const dims = dimensionValues({ destination: 'équipe sécurité', stream: 'x'.repeat(2_000), empty: ' ' });
    expect(dims.destination).toBe('\\u00e9quipe s\\u00e9curit\\u00e9');
    expect(dims.stream).toHaveLength(1_024);
    expect(dims.empty).toBe('-');
  });
});

describe('a stream with a huge item and a huge uid', () => {
  const emu = useEmulator({ eventsPerTenant: 12, credentials: 5 });
  const db = useDynalite();
  let hook: Receiver;
  beforeAll(async () => {
    hook = await startReceiver();
  });
  afterAll(() => hook.close());

  it('records and alerts both, and the rest of the stream after them, every item once', async () => {
    const world = await makeWorld(emu, db, {
      sources: { tenantEvents: { lookback: 'PT24H' } },
      // Slack too: its records stay pending (paced), the path a batch write of whole items takes.
      destinations: { siem: { type: 'webhook', url: hook.url }, soc: { type: 'webhook', url: hook.url } },
      routes: [{ name: 'all', to: ['siem', 'soc'] }],
    });
    await world.cycle('events');
    hook.requests.length = 0;
    const [huge, long, after] = emu.running.emulator.appendEvents(1001, 3);
    // Over DynamoDB's 400 KB by dynalite's own count too.
    huge!.item.highlights.content = ['x'.repeat(450_000)];
    long!.item.metadata.uid = `paste/pastebin/${'a'.repeat(3_000)}`;
    const result = await world.cycle('events');
    expect(result.streams[0]?.status).toBe('done');
    const items = hook.requests.flatMap(
      (r) => (r.json() as { items: { metadata: { uid: string }; _trimmed?: string[] }[] }).items,
    );
    const uids = items.map((i) => i.metadata.uid).sort();
    const expected = [huge, long, after].map((e) => e!.item.metadata.uid);
    expect(uids).toEqual([...expected, ...expected].sort());
    const trimmed = items.find((i) => i.metadata.uid === huge!.item.metadata.uid);
    expect(trimmed?._trimmed).toEqual(['highlights.content[0]']);
    await world.cycle('events');
    expect(hook.requests.flatMap((r) => (r.json() as { items: unknown[] }).items)).toHaveLength(6);
  });

  it('a destination named with separators and accents gets every item once, and its records are found', async () => {
    const name = 'SIEM #1 ~ équipe';
    hook.requests.length = 0;
    const world = await makeWorld(emu, db, {
      sources: { tenantEvents: { lookback: 'PT24H' } },
      destinations: { [name]: { type: 'webhook', url: hook.url } },
      routes: [{ name: 'all', to: [name] }],
    });
    await world.cycle('events');
    await world.cycle('events');
    const uids = hook.requests.flatMap((r) =>
      (r.json() as { items: { metadata: { uid: string } }[] }).items.map((i) => i.metadata.uid),
    );
    expect(uids.length).toBeGreaterThan(0);
    expect(new Set(uids).size).toBe(uids.length);
    const records = await world.runtime.deliveries.list({ limit: 10_000 });
    expect(records).toHaveLength(uids.length);
    expect(new Set(records.map((r) => r.destination))).toEqual(new Set([name]));
  });
});

/**
 * What the each-alert-once tests (alerts-once*.test.ts) read and record: every row of `GET /alerts`
 * across its pages, one alert's detail, the destinations and states a row shows, and the pages of
 * leak items that two streams record to different destinations.
 */
import { expect } from 'vitest';
import type { NewDelivery } from '../../lib/state/records/index.ts';
import { type ApiUnderTest, bearer } from './harness.ts';

export interface Row {
  key: string;
  deliveries: { id: string; destination: string; status: string }[];
}

/** `GET path` as the runbook role; any status but 200 fails the test. */
export async function get(api: ApiUnderTest, path: string) {
  const res = await api.app.request(path, { headers: bearer(api.tokens.runbook) });
  expect(res.status, path).toBe(200);
  return (await res.json()) as Record<string, unknown>;
}

/** Every row `GET /alerts?query` lists, following its cursor (20 pages at most, so a loop ends). */
export async function allRows(api: ApiUnderTest, query = ''): Promise<Row[]> {
  const rows: Row[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const sep = query && cursor ? '&' : '';
    const body = await get(api, `/alerts?${query}${cursor ? `${sep}cursor=${cursor}` : ''}`);
    rows.push(...(body.items as Row[]));
    cursor = body.cursor as string | undefined;
    pages += 1;
  } while (cursor && pages < 20);
  return rows;
}

/** One alert's detail with its status: an item nobody listed may have none (404). */
export async function detail(api: ApiUnderTest, key: string) {
  const res = await api.app.request(`/alerts/${encodeURIComponent(key)}`, {
    headers: bearer(api.tokens.runbook),
  });
  return { status: res.status, body: (await res.json()) as Row };
}

/** A row's deliveries as destination to status. */
export const states = (row: Pick<Row, 'deliveries'>) =>
  Object.fromEntries(row.deliveries.map((d) => [d.destination, d.status]));

export const destinationsOf = (row: { deliveries: { destination: string }[] }) =>
  row.deliveries.map((d) => d.destination).sort();

const now = Date.now();
/** `count` leak items, a second apart, newest first. */
export const leaks = (count: number, prefix: string) =>
  Array.from({ length: count }, (_, i) => ({
    key: `${prefix}/${String(i).padStart(3, '0')}`,
    item: {
      metadata: {
        uid: `${prefix}/${i}`,
        type: 'leak',
        severity: 'high',
        matched_at: new Date(now - i * 1000).toISOString(),
        estimated_created_at: new Date(now - i * 1000).toISOString(),
      },
    },
  }));

/** What one stream's page asks to record: every item to `destination`. */
export const page = (
  items: ReturnType<typeof leaks>,
  destination: string,
  source: string,
  status: NewDelivery['status'] = 'pending',
): NewDelivery[] =>
  items.map(({ key, item }) => ({
    destination,
    kind: 'event',
    key,
    source,
    routes: [source],
    status,
    ...(status === 'silenced' ? { note: 'silence s-1' } : {}),
    item,
  }));

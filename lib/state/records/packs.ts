/**
 * Packs: the final records of an exclusive stream's page (sent inline, silenced, baseline) stored
 * as one item per (page, destination, status) instead of one item per record, and the claim mark
 * that lets an exclusive stream skip reading for items nobody can have recorded yet.
 *
 * Why: a delivery record per (item, destination) costs one write for every item, and a read to
 * check it first. A credential backlog is thousands of items a page run; packing writes a page's
 * 100 final records as one small item and, with the claim mark, reads nothing for them.
 *
 * How items are found again. Every item has a position: the time its stream pages by (normalised
 * to UTC milliseconds) and its key, numeric keys zero-padded so they sort as numbers. A pack sits
 * under `pack#<destination>#<kind>`, sorted by the highest position it holds, and says the lowest;
 * the packs that can hold positions `a..b` are those sorted at `a` or after whose lowest is `b` or
 * before (one Query).
 *
 * The claim mark, `seen#<kind>`: before any record of a kind is created, by any stream, through
 * either path, the mark is raised to the highest position among them (a conditional UpdateItem
 * that returns the old value). So no record of any destination exists for an item whose position
 * is above the mark as it was before a page's claim: an exclusive stream (no other stream can
 * produce its items) creates those without reading anything. Items at or below it, or without a
 * position, are checked as before (per-record keys and packs). The order is what keeps this true
 * through a crash: claim, then records, then cursor. A claim whose records never got written only
 * makes later pages check more.
 *
 * Expiry: a pack carries `expiresAt` like the records it replaces (checked in code too). Packs are
 * written once, never updated: cheap to write, and nothing to contend on.
 */

import type { ItemKind } from '../../model.ts';
import { queryAll, type StoredItem, type TableIo } from '../io.ts';
import { nameInKey } from '../limits.ts';
import { marshall, unmarshall } from '../marshall.ts';
import { ConditionalCheckFailedException, UpdateItemCommand } from '../sdk.ts';
import { type DeliveryRecord, type DeliveryStatus, FINAL_STATUSES, isLive } from './record.ts';

/** Where an item sorts in its feed, or undefined when its time cannot be read. */
export function itemPosition(time: string | undefined, key: string): string | undefined {
  if (typeof time !== 'string') return undefined;
  const ms = Date.parse(time);
  if (!Number.isFinite(ms)) return undefined;
  const at = new Date(ms).toISOString();
  return `${at}#${/^\d{1,20}$/.test(key) ? key.padStart(20, '0') : key}`;
}

/** The highest position of anything at `at` (ms since the epoch). */
export function positionAt(at: number): string {
  return `${new Date(at).toISOString()}#\uffff`;
}

/**
 * What a claim learnt: records may exist only for positions up to `before` (undefined: any may).
 * `fresh`: there was no mark at all, so nothing positioned was ever claimed.
 */
export interface Claim {
  before?: string;
  fresh?: boolean;
}

export type PackStatus = Extract<DeliveryStatus, 'sent' | 'silenced' | 'baseline'>;

/** Whether `record` may be stored in a pack: final, and with a position. */
export function packable(record: DeliveryRecord): boolean {
  return FINAL_STATUSES.has(record.status) && record.position !== undefined;
}

type Entry = [key: string, routes: string[], note?: string];

/** A pack's entries stay under this many characters of JSON: DynamoDB items hold 400 KB at most. */
export const PACK_MAX_CHARS = 100_000;

function packPk(destination: string, kind: ItemKind): string {
  return `pack#${nameInKey(destination)}#${kind}`;
}

/**
 * One stream's claims during one cycle. Rather than raising the mark page by page, the first page
 * claims everything up to now (its items, and every later page's, were imported by then): one
 * claim a cycle instead of one a page. A page placed above that (an import stamped after the
 * claim) claims again before anything is written. What the first claim found, `before`, stays
 * true for the whole cycle as far as this stream's items go: an exclusive stream is the only one
 * that writes them. What this cycle itself wrote is covered by `start`: a page's items at or below
 * the highest position of the pages started before it are checked, so an item that a shifting
 * feed shows twice is found where the earlier page put it.
 */
export class ClaimWindow {
  private claimed?: string;
  private before?: string;
  private fresh = false;
  private proven = false;
  private started?: string;
  private claiming: Promise<void> = Promise.resolve();

  constructor(
    readonly kind: ItemKind,
    private readonly claim: (kind: ItemKind, position: string) => Promise<Claim>,
    private readonly now: () => number,
  ) {}

  /** Notes a page's highest position, in page order; returns the highest of the pages before it. */
  start(top: string): string | undefined {
    const before = this.started;
    if (this.started === undefined || top > this.started) this.started = top;
    return before;
  }

  /**
   * Claims at least up to `top`; resolves with the position above which a page's items are known
   * absent (undefined: none is).
   */
  async threshold(top: string, startedBefore: string | undefined): Promise<string | undefined> {
    const run = this.claiming.then(async () => {
      if (this.claimed !== undefined && top <= this.claimed) return;
      const now = positionAt(this.now());
      const position = top > now ? top : now;
      const { before, fresh } = await this.claim(this.kind, position);
      this.claimed = position;
      // Only the first claim of the cycle says what others wrote; a later one finds our own mark.
      if (!this.proven) {
        this.proven = true;
        this.before = before;
        this.fresh = fresh === true;
      }
    });
    this.claiming = run.catch(() => {});
    await run;
    // No mark before this cycle: its first page is read in full (records written without a
    // position are not excluded), later ones only at or below what the cycle already held.
    if (this.fresh) return startedBefore;
    if (this.before === undefined) return undefined;
    return startedBefore !== undefined && startedBefore > this.before ? startedBefore : this.before;
  }
}

export class PackStore {
  constructor(private readonly io: TableIo) {}

  /**
   * Raises the mark of `kind` to `position` and says where it was. When it was already there or
   * above, any record may exist: `before` is undefined.
   */
  async claim(kind: ItemKind, position: string): Promise<Claim> {
    this.io.onRequest?.('UpdateItem');
    try {
      const out = await this.io.client.send(
        new UpdateItemCommand({
          TableName: this.io.tableName,
          Key: marshall({ pk: `seen#${kind}`, sk: 'mark' }),
          UpdateExpression: 'SET upTo = :p',
          ConditionExpression: 'attribute_not_exists(upTo) OR upTo < :p',
          ExpressionAttributeValues: marshall({ ':p': position }),
          ReturnValues: 'UPDATED_OLD',
        }),
      );
      const before = out.Attributes?.upTo?.S;
      return before === undefined ? { fresh: true } : { before };
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return {};
      throw error;
    }
  }

  /**
   * The stored packs of `records` (final, with positions, one destination, kind, status and
   * source): one, or more when they would not fit in PACK_MAX_CHARS (a page may hold 10,000
   * credentials). Unconditional puts, written with the page's other records (records/index.ts).
   */
  items(records: readonly DeliveryRecord[], expiresAt: number): StoredItem[] {
    const sorted = [...records].sort((a, b) => ((a.position as string) < (b.position as string) ? -1 : 1));
    const packs: { records: DeliveryRecord[]; entries: Entry[]; chars: number }[] = [];
    for (const r of sorted) {
      const entry: Entry = r.note ? [r.key, r.routes, r.note] : [r.key, r.routes];
      const chars = JSON.stringify(entry).length + 1;
      let last = packs[packs.length - 1];
      if (!last || last.chars + chars > PACK_MAX_CHARS) {
        last = { records: [], entries: [], chars: 2 };
        packs.push(last);
      }
      last.records.push(r);
      last.entries.push(entry);
      last.chars += chars;
    }
    return packs.map((pack) => this.item(pack.records, pack.entries, expiresAt));
  }

  private item(records: DeliveryRecord[], entries: Entry[], expiresAt: number): StoredItem {
    const first = records[0] as DeliveryRecord;
    const random = Math.floor(Math.random() * 0x1_0000_0000)
      .toString(16)
      .padStart(8, '0');
    return marshall({
      pk: packPk(first.destination, first.kind),
      sk: `${(records[records.length - 1] as DeliveryRecord).position}~${random}`,
      lo: first.position,
      status: first.status,
      source: first.source,
      at: first.sentAt ?? first.updatedAt,
      createdAt: first.createdAt,
      expiresAt,
      entries: JSON.stringify(entries),
    });
  }

  /** Keys held by live packs of `destination` and `kind` that can hold positions `from..to`. */
  async keysBetween(destination: string, kind: ItemKind, from: string, to: string): Promise<Set<string>> {
    const keys = new Set<string>();
    const now = Math.floor(this.io.clock.now() / 1000);
    const packs = await queryAll(this.io, {
      KeyConditionExpression: 'pk = :pk AND sk >= :from',
      ExpressionAttributeValues: marshall({ ':pk': packPk(destination, kind), ':from': from }),
      ProjectionExpression: 'lo, entries, expiresAt',
      ConsistentRead: true,
    });
    for (const stored of packs) {
      const { lo, entries, expiresAt } = unmarshall(stored);
      if (!isLive(expiresAt, now)) continue;
      if (typeof lo === 'string' && lo > to) continue;
      for (const [key] of JSON.parse(String(entries)) as Entry[]) keys.add(key);
    }
    return keys;
  }
}

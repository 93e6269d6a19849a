/**
 * Which new items the alert index (alert-index.ts) gets an entry for, and when: at once, or (with
 * deliveries sent inline) once the last of those records is written with its outcome; a shared
 * stream's items go through their details (shared-index.ts). Kept apart from what the entries hold
 * (alert-index.ts); all three load with the first page that creates records (DeliveryRecords), so
 * a worker's start need not carry them.
 */
import type { TableIo } from '../io.ts';
import { entryOf, type Indexed, type IndexWrites, indexWrites } from './alert-index.ts';
import type { DeliveryRecord } from './record.ts';
import { addFound, type Found, indexShared } from './shared-index.ts';

const itemId = (r: Pick<DeliveryRecord, 'kind' | 'key'>) => `${r.kind}\u0000${r.key}`;

/** Records grouped by item, in first-seen order. */
export function byItem(records: readonly DeliveryRecord[]): DeliveryRecord[][] {
  const groups = new Map<string, DeliveryRecord[]>();
  for (const r of records) {
    const id = itemId(r);
    const list = groups.get(id);
    if (list) list.push(r);
    else groups.set(id, [r]);
  }
  return [...groups.values()];
}

/** Items waiting for their inline records to be written; forgotten after this long (a failed send). */
const WAIT_MS = 15 * 60_000;

/**
 * Which new items get an entry, and when: at once, or (with inline records) once the last of those
 * is written with its outcome. One per DeliveryRecords, so per run.
 */
export class IndexPlan {
  private readonly waiting = new Map<
    string,
    { records: Map<string, DeliveryRecord>; open: Set<string>; since: number }
  >();

  constructor(private readonly now: () => number) {}

  /**
   * Of a page's records, the groups of the items to index now: those whose every record was
   * absent (none existed), but baselines; items with records to send inline wait for `inserted`.
   */
  fresh(
    records: readonly DeliveryRecord[],
    absent: ReadonlySet<DeliveryRecord>,
    inline: ReadonlySet<DeliveryRecord>,
  ): DeliveryRecord[][] {
    const now = this.now();
    for (const [id, w] of this.waiting) if (now - w.since > WAIT_MS) this.waiting.delete(id);
    const ready: DeliveryRecord[][] = [];
    for (const group of byItem(records)) {
      if (!group.every((r) => absent.has(r)) || group.some((r) => r.status === 'baseline')) continue;
      const sent = group.filter((r) => inline.has(r));
      if (sent.length === 0) {
        ready.push(group);
        continue;
      }
      this.waiting.set(itemId(group[0] as DeliveryRecord), {
        records: new Map(group.map((r) => [r.id, r])),
        open: new Set(sent.map((r) => r.id)),
        since: now,
      });
    }
    return ready;
  }

  /** Records written after their inline send: the groups of the items now complete. */
  inserted(records: readonly DeliveryRecord[]): DeliveryRecord[][] {
    const ready: DeliveryRecord[][] = [];
    for (const r of records) {
      const id = itemId(r);
      const w = this.waiting.get(id);
      if (!w?.open.delete(r.id)) continue;
      // The item as it was recorded, should the written record not carry it.
      w.records.set(r.id, r.item == null ? { ...r, item: w.records.get(r.id)?.item } : r);
      if (w.open.size === 0) {
        this.waiting.delete(id);
        ready.push([...w.records.values()]);
      }
    }
    return ready;
  }
}

/**
 * The index items of new items, once their records are: what DeliveryRecords writes, the details
 * beside the records and the list packs after them (alert-index.ts says why in that order).
 */
export class AlertIndexer {
  private readonly plan: IndexPlan;

  constructor(
    private readonly io: TableIo,
    /** When entries written now expire (the records' retention). */
    private readonly expiresAt: () => number | undefined,
  ) {
    this.plan = new IndexPlan(() => io.clock.now());
  }

  /** A page's records are being created (`absent` of them now; `inline`, to send first). */
  recorded(
    records: readonly DeliveryRecord[],
    absent: ReadonlySet<DeliveryRecord>,
    inline: ReadonlySet<DeliveryRecord> = new Set(),
  ): IndexWrites {
    return this.writes(this.plan.fresh(records, absent, inline));
  }

  /** Records are being written after their inline send, with the outcome. */
  inserted(records: readonly DeliveryRecord[]): IndexWrites {
    return this.writes(this.plan.inserted(records));
  }

  /**
   * A shared stream created `created` of a page's `records`: indexes each item it created records
   * of (but baselines) through the item's detail, which every stream adds to, and adds the others'
   * destinations to details that lack them (shared-index.ts).
   */
  async recordShared(records: readonly DeliveryRecord[], created: readonly DeliveryRecord[]): Promise<void> {
    const mine = new Set(created);
    const items: Indexed[] = [];
    const found: Found[] = [];
    for (const group of byItem(records)) {
      if (group.some((r) => r.status === 'baseline')) continue;
      const made = group.filter((r) => mine.has(r));
      if (made.length) items.push({ entry: { ...entryOf(made), shared: true }, item: made[0]?.item });
      const first = group[0] as DeliveryRecord;
      const before = group.filter((r) => !mine.has(r)).map((r) => r.destination);
      if (before.length) found.push({ key: first.key, kind: first.kind, destinations: before });
    }
    if (items.length) await indexShared(this.io, items, this.expiresAt());
    await addFound(this.io, found, this.expiresAt());
  }

  private writes(items: DeliveryRecord[][]): IndexWrites {
    return indexWrites(
      items.map((records) => ({ entry: entryOf(records), item: (records[0] as DeliveryRecord).item })),
      this.expiresAt(),
    );
  }
}

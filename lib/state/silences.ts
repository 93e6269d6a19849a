/**
 * Run-time silences in the table (docs/runbook.md): one item each, all in one partition,
 * `silence` / `<id>`, and ids that sort by creation time (`s-<ms, base 36>-<6 hex>`).
 *
 * Why that layout: every poll cycle and every delivery pass reads the active silences once, at its
 * start, and a new silence must count from the very next one. So the read is one Query on the
 * table itself, with a consistent read (an index could lag behind a silence just added), and it
 * need not go back further than 366 days of creations: no silence may end later than that after
 * it was made, so anything older has ended. Expired silences stay (for the record) and are passed
 * over by the filter; the read stays within the silences made in the last year, typically one page.
 * A silence is found by id with one GetItem, and ended with one conditional UpdateItem.
 */
import { createHash, randomBytes } from 'node:crypto';
import {
  type Holding,
  isActive,
  MAX_SILENCE_MS,
  type Silence,
  type SilenceSource,
} from '../rules/silences.ts';
import { queryAll, type TableIo } from './io.ts';
import { marshall, unmarshall } from './marshall.ts';
import { ConditionalCheckFailedException, GetItemCommand, PutItemCommand, UpdateItemCommand } from './sdk.ts';

export const SILENCE_PK = 'silence';

/** How far back the active read looks: the longest silence, and a day for clocks that disagree. */
const LOOK_BACK_MS = MAX_SILENCE_MS + 86_400_000;

/** The part of an id made of its creation time: 9 base-36 digits hold every ms until the year 5188. */
function timePart(ms: number): string {
  return Math.max(0, Math.floor(ms)).toString(36).padStart(9, '0');
}

/** A new silence id, made at `now`. */
export function newSilenceId(now: number): string {
  return `s-${timePart(now)}-${randomBytes(3).toString('hex')}`;
}

/**
 * The id of the silence one request makes, the same each time the request comes again (a Slack
 * click Slack retries or someone replays, an API retry with its Idempotency-Key after a crash or a
 * lost answer): made at `at`, the request's own time (the click's, the key's first attempt's), and
 * named by a digest of its id, so the second `create` finds the first's silence instead of making
 * another.
 */
export function silenceIdFor(requestId: string, at: number): string {
  return `s-${timePart(at)}-${createHash('sha256').update(requestId).digest('hex').slice(0, 6)}`;
}

/** A stored silence, its fields in the documented order (id, match, until, ...). */
function fromItem(item: Record<string, unknown>): Silence {
  const str = (key: string) => (typeof item[key] === 'string' ? (item[key] as string) : undefined);
  return {
    id: String(item.id),
    match: JSON.parse(String(item.match)),
    until: String(item.until),
    reason: String(item.reason),
    createdBy: String(item.createdBy),
    createdAt: String(item.createdAt),
    ...(str('expiredAt') ? { expiredAt: str('expiredAt') } : {}),
    ...(str('expiredBy') ? { expiredBy: str('expiredBy') } : {}),
  };
}

/** What ending a silence found: it ended now, it had ended already, or there is no such silence. */
export type Expiry = { outcome: 'expired' | 'already'; silence: Silence } | { outcome: 'unknown' };

export class SilenceStore implements SilenceSource {
  constructor(private readonly io: TableIo) {}

  private key(id: string) {
    return { pk: SILENCE_PK, sk: id };
  }

  /**
   * Stores a new silence; an existing one is never overwritten. Returns the silence stored under
   * its id: this one, or the one a request with the same id (silenceIdFor) made first.
   */
  async create(silence: Silence): Promise<Silence> {
    this.io.onRequest?.('PutItem');
    try {
      await this.io.client.send(
        new PutItemCommand({
          TableName: this.io.tableName,
          // `match` as JSON: kept exactly as given, whatever keys a later version of the shape adds.
          Item: marshall({ ...this.key(silence.id), ...silence, match: JSON.stringify(silence.match) }),
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      );
      return silence;
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      const first = await this.get(silence.id);
      if (!first) throw error;
      return first;
    }
  }

  async get(id: string): Promise<Silence | undefined> {
    this.io.onRequest?.('GetItem');
    const out = await this.io.client.send(
      new GetItemCommand({ TableName: this.io.tableName, Key: marshall(this.key(id)), ConsistentRead: true }),
    );
    return out.Item ? fromItem(unmarshall(out.Item)) : undefined;
  }

  /** The silences active now: one consistent Query (its pages followed), newest first. */
  async active(): Promise<Silence[]> {
    const now = this.io.clock.now();
    const items = await queryAll(this.io, {
      KeyConditionExpression: 'pk = :pk AND sk >= :from',
      FilterExpression: 'attribute_not_exists(expiredAt) AND #until > :now',
      ExpressionAttributeNames: { '#until': 'until' },
      ExpressionAttributeValues: marshall({
        ':pk': SILENCE_PK,
        ':from': `s-${timePart(now - LOOK_BACK_MS)}`,
        ':now': new Date(now).toISOString(),
      }),
      ConsistentRead: true,
      ScanIndexForward: false,
    });
    return items.map((item) => fromItem(unmarshall(item))).filter((s) => isActive(s, now));
  }

  /** Every silence ever made, newest first, at most `limit`: an operator's look, not a hot path. */
  async all(limit = 1_000): Promise<Silence[]> {
    const items = await queryAll(
      this.io,
      {
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: marshall({ ':pk': SILENCE_PK }),
        ConsistentRead: true,
        ScanIndexForward: false,
      },
      limit,
    );
    return items.map((item) => fromItem(unmarshall(item)));
  }

  /**
   * Ends the silence now, marked with who ended it; the item stays. A silence that had ended
   * already (by hand, or its `until` passed) is left as it is.
   */
  async expire(id: string, by: string): Promise<Expiry> {
    const now = new Date(this.io.clock.now()).toISOString();
    try {
      this.io.onRequest?.('UpdateItem');
      const out = await this.io.client.send(
        new UpdateItemCommand({
          TableName: this.io.tableName,
          Key: marshall(this.key(id)),
          UpdateExpression: 'SET expiredAt = :now, expiredBy = :by',
          ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(expiredAt) AND #until > :now',
          ExpressionAttributeNames: { '#until': 'until' },
          ExpressionAttributeValues: marshall({ ':now': now, ':by': by }),
          ReturnValues: 'ALL_NEW',
        }),
      );
      return { outcome: 'expired', silence: fromItem(unmarshall(out.Attributes ?? {})) };
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
    const silence = await this.get(id);
    return silence ? { outcome: 'already', silence } : { outcome: 'unknown' };
  }
}

/**
 * What a cycle or a pass holds alerts back with: the config's silences (a deploy's) and the
 * table's, read once per call. Whether each is live is decided per item, at its time.
 */
export function silenceSource(config: readonly Holding[], store: SilenceSource): SilenceSource {
  return { active: async () => [...config, ...(await store.active())] };
}

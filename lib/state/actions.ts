/**
 * Actions on events (docs/actions.md), as records: one per action id, written before the
 * upstream is called, so an action happens once whatever crashes or repeats.
 *
 * - `begin` creates the record (`pending`) with a conditional put; the same id again finds it.
 * - `hold` is the record's lease: only the call holding it works on the action (asks the upstream,
 *   follows up), so the same id from many calls at once asks the upstream once; the others wait
 *   for the record to be done and answer from it. A hold lapses (a crashed holder), and then the
 *   next call, or a delivery pass, takes the action up. A holder whose work outlasts a hold keeps
 *   it renewed, and writes its progress only while it holds it: held-actions.ts (account actions).
 * - `answered` keeps the upstream's answer per uid and which uids it changed, in one write, before
 *   anything else moves: a crash after it finishes from the record, not from a second look.
 * - `done` marks it finished: out of the index the delivery pass reads to finish what a crash
 *   interrupted (`unfinished`, the sparse index gsi1 under `action#open`).
 *
 * The flags we know of each event (`flags#<uid>`: ignored, remediated) come from the actions taken
 * through us: the upstream's search does not say an event's flags by uid. A flag is changed with a
 * conditional write that names the action that changed it (`ignoredBy`, `remediatedBy`), so of
 * two actions setting it at once (a double click: two action ids) exactly one changes it and
 * follows up; the same action again (resumed after a crash) finds its own name and still counts.
 * An action that sets a flag we know is set already changes nothing (and no follow-up goes); one
 * taken in the upstream's own web app is unknown to us, and a follow-up of ours then repeats what
 * it did, harmlessly.
 *
 * It is longer than 300 lines because it is one table protocol (records, holds, flags, the audit
 * trail) that every kind of action shares, and it reads best whole.
 *
 * The audit trail of actions (`audit#events`, newest first) holds each action with who, what, on
 * which uids, when, and the upstream's answer; written from the record, so writing it twice (a
 * resumed action) leaves one entry.
 */
import type {
  ActionAuditEntry,
  ActionRecord,
  EventActionType,
  EventFlags,
  UidResult,
} from './action-record.ts';
import { batchGet, batchPut, mapLimit, queryAll, type TableIo } from './io.ts';
import { marshall, unmarshall } from './marshall.ts';
import { ConditionalCheckFailedException, PutItemCommand, QueryCommand, UpdateItemCommand } from './sdk.ts';

export type {
  ActionAuditEntry,
  ActionRecord,
  EventActionType,
  EventFlags,
  UidResult,
} from './action-record.ts';

export const AUDIT_PK = 'audit#events';
const flagsKey = (uid: string) => ({ pk: `flags#${uid}`, sk: 'flags' });

/** The flag an action sets, and to what. */
export function flagOf(type: EventActionType): [keyof EventFlags, boolean] {
  return type === 'ignore'
    ? ['ignored', true]
    : type === 'unignore'
      ? ['ignored', false]
      : type === 'remediate'
        ? ['remediated', true]
        : ['remediated', false];
}

/** What every kind of action's record has: the store keeps these, the rest is the kind's. */
export interface ActionRecordBase {
  id: string;
  at: string;
  status: ActionRecord['status'];
  holder?: string;
  heldUntil?: number;
  /** Set by `park` (held-actions.ts): what it waits for (a provider's rate), until when (ms). */
  waits?: Record<string, number>;
}

/**
 * Where a kind of action is kept: its records under `<prefix>#<id>`, the open ones in gsi1 under
 * `open`. Event actions are `action`; account actions (lib/identity/act.ts) `idaction`, so each
 * kind's pass finishes only its own. Both write the one audit trail.
 */
export interface ActionKind {
  prefix: string;
  open: string;
}

export const EVENT_ACTIONS: ActionKind = { prefix: 'action', open: 'action#open' };

export class ActionStore<R extends ActionRecordBase = ActionRecord> {
  protected readonly io: TableIo;
  private readonly kind: ActionKind;

  constructor(io: TableIo, kind: ActionKind = EVENT_ACTIONS) {
    this.io = io;
    this.kind = kind;
  }

  protected key(id: string) {
    return { pk: `${this.kind.prefix}#${id}`, sk: 'action' };
  }

  /**
   * Creates the action's record (held by `hold` when given); when one exists for this id, returns
   * it instead.
   */
  async begin(
    action: Omit<R, 'status'>,
    hold?: { holder: string; heldUntil: number },
  ): Promise<{ created: true } | { existing: R }> {
    const record = { ...action, ...hold, status: 'pending' } as R;
    try {
      await this.io.client.send(
        new PutItemCommand({
          TableName: this.io.tableName,
          Item: marshall({
            ...this.key(action.id),
            gsi1pk: this.kind.open,
            gsi1sk: `${action.at}#${action.id}`,
            ...(record as Record<string, unknown>),
          }),
          ConditionExpression: 'attribute_not_exists(pk) OR #status = :forgotten',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: marshall({ ':forgotten': 'forgotten' }),
        }),
      );
      return { created: true };
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      const existing = await this.get(action.id);
      if (!existing) throw error;
      return { existing };
    }
  }

  async get(id: string): Promise<R | undefined> {
    const [item] = await batchGet(this.io, [marshall(this.key(id))]);
    return item ? strip<R>(unmarshall(item)) : undefined;
  }

  /**
   * Takes the action's work for `holder` until `until` (ms): when it is open and nobody else's hold
   * runs past `now`. Returns the record as held, or undefined when it is done, forgotten, or held.
   */
  async hold(id: string, holder: string, now: number, until: number): Promise<R | undefined> {
    try {
      const out = await this.io.client.send(
        new UpdateItemCommand({
          TableName: this.io.tableName,
          Key: marshall(this.key(id)),
          UpdateExpression: 'SET holder = :h, heldUntil = :until',
          ConditionExpression:
            'attribute_exists(pk) AND #status IN (:pending, :answered) AND (attribute_not_exists(heldUntil) OR heldUntil < :now OR holder = :h)',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: marshall({
            ':h': holder,
            ':until': until,
            ':now': now,
            ':pending': 'pending',
            ':answered': 'answered',
          }),
          ReturnValues: 'ALL_NEW',
        }),
      );
      return strip<R>(unmarshall(out.Attributes ?? {}));
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return undefined;
      throw error;
    }
  }

  /** Gives a hold back (its work failed): the next call may take the action up at once. */
  async release(id: string, holder: string): Promise<void> {
    try {
      await this.io.client.send(
        new UpdateItemCommand({
          TableName: this.io.tableName,
          Key: marshall(this.key(id)),
          UpdateExpression: 'REMOVE holder, heldUntil',
          ConditionExpression: 'holder = :h',
          ExpressionAttributeValues: marshall({ ':h': holder }),
        }),
      );
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
  }

  /** Keeps the upstream's answer and what it changed (still open: follow-ups to come). */
  async answered(id: string, results: UidResult[], changed: string[]): Promise<void> {
    await this.update(id, 'SET #status = :s, results = :r, changed = :c', {
      ':s': 'answered',
      ':r': results,
      ':c': changed,
    });
  }

  /** Finished: out of the open index. */
  async done(id: string): Promise<void> {
    await this.update(id, 'SET #status = :s REMOVE gsi1pk, gsi1sk, holder, heldUntil', { ':s': 'done' });
  }

  /**
   * Forgets an action the upstream never answered: out of the open index, and `begin` with the
   * same id creates it afresh, so trying it again really tries again. `unanswered` says how the
   * upstream failed, for the calls that waited on this one.
   */
  async forget(id: string, unanswered: NonNullable<ActionRecord['unanswered']>): Promise<void> {
    await this.update(id, 'SET #status = :s, unanswered = :u REMOVE gsi1pk, gsi1sk, holder, heldUntil', {
      ':s': 'forgotten',
      ':u': unanswered,
    });
  }

  /**
   * Open actions begun before `before` (ms): those a crash may have interrupted, oldest first (a
   * parked one is listed at its `park` time instead).
   */
  async unfinished(before: number, limit = 100): Promise<R[]> {
    const items = await queryAll(
      this.io,
      {
        IndexName: 'gsi1',
        KeyConditionExpression: 'gsi1pk = :pk AND gsi1sk < :before',
        ExpressionAttributeValues: marshall({
          ':pk': this.kind.open,
          ':before': new Date(before).toISOString(),
        }),
      },
      limit,
    );
    return items.map((item) => strip<R>(unmarshall(item)));
  }

  /** The flags we know of `uids` (absent: nothing known). */
  async flags(uids: readonly string[]): Promise<Map<string, EventFlags>> {
    const out = new Map<string, EventFlags>();
    for (const item of await batchGet(
      this.io,
      uids.map((uid) => marshall(flagsKey(uid))),
    )) {
      const { uid, ignored, remediated } = unmarshall(item);
      out.set(String(uid), {
        ...(typeof ignored === 'boolean' ? { ignored } : {}),
        ...(typeof remediated === 'boolean' ? { remediated } : {}),
      });
    }
    return out;
  }

  /**
   * Sets `flag` to `value` on `uids` for action `id`, each with a condition: the flag is not at
   * `value` yet, or this same action set it. Returns the uids this action changed; of several
   * actions setting one flag at once, one changes it.
   */
  async changeFlags(
    uids: readonly string[],
    flag: keyof EventFlags,
    value: boolean,
    id: string,
  ): Promise<string[]> {
    const changed = await mapLimit(uids, 10, async (uid) => {
      try {
        await this.io.client.send(
          new UpdateItemCommand({
            TableName: this.io.tableName,
            Key: marshall(flagsKey(uid)),
            UpdateExpression: 'SET #uid = :uid, #flag = :v, #by = :id',
            ConditionExpression: 'attribute_not_exists(#flag) OR #flag <> :v OR #by = :id',
            ExpressionAttributeNames: { '#uid': 'uid', '#flag': flag, '#by': `${flag}By` },
            ExpressionAttributeValues: marshall({ ':uid': uid, ':v': value, ':id': id }),
          }),
        );
        return true;
      } catch (error) {
        if (error instanceof ConditionalCheckFailedException) return false;
        throw error;
      }
    });
    return uids.filter((_, i) => changed[i]);
  }

  /** The action in the audit trail (once, however often written). */
  async audit(record: R | ActionAuditEntry): Promise<void> {
    const {
      status: _s,
      holder: _h,
      heldUntil: _u,
      unanswered: _n,
      waits: _w,
      ...entry
    } = record as unknown as ActionRecord & Pick<ActionRecordBase, 'waits'>;
    await this.io.client.send(
      new PutItemCommand({
        TableName: this.io.tableName,
        Item: marshall({ pk: AUDIT_PK, sk: `${record.at}#${record.id}`, ...entry }),
      }),
    );
    // Each target's own trail (`acted#<kind>#<uid or login>`): what an alert's detail lists.
    const { actedPointers } = await import('./acted.ts');
    await batchPut(this.io, actedPointers(this.kind.prefix, entry as ActionAuditEntry));
  }

  /** The audit trail of actions, newest first. */
  async auditTrail(limit = 100): Promise<ActionAuditEntry[]> {
    const out = await this.io.client.send(
      new QueryCommand({
        TableName: this.io.tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: marshall({ ':pk': AUDIT_PK }),
        ScanIndexForward: false,
        Limit: limit,
      }),
    );
    return (out.Items ?? []).map((item) => {
      const { pk: _pk, sk: _sk, ...entry } = unmarshall(item);
      return entry as unknown as ActionAuditEntry;
    });
  }

  private async update(id: string, expression: string, values: Record<string, unknown>): Promise<void> {
    await this.io.client.send(
      new UpdateItemCommand({
        TableName: this.io.tableName,
        Key: marshall(this.key(id)),
        UpdateExpression: expression,
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: marshall(values),
      }),
    );
  }
}

function strip<R>(item: Record<string, unknown>): R {
  const { pk: _pk, sk: _sk, gsi1pk: _a, gsi1sk: _b, ...record } = item;
  return record as unknown as R;
}

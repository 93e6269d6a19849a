/**
 * The records of actions whose work may outlast a hold (account actions, lib/identity/act-work.ts):
 * the holder renews its hold while it works (`renew`; false: another took the action up after it
 * lapsed, and the holder stops), writes its progress only under conditions (`note`: while the hold
 * is its own, while an entry's answer is unset, while no other call was made since), keeps the
 * answer only while it holds the action (`answeredWhile`), and may set the action aside until a
 * later time with its hold given back (`park`). Apart from state/actions.ts, which the API loads at
 * its start, because only the code that works on account actions uses these.
 */
import { type ActionRecordBase, ActionStore, type UidResult } from './actions.ts';
import { marshall } from './marshall.ts';
import { ConditionalCheckFailedException, UpdateItemCommand } from './sdk.ts';

/** The conditions of a `note` (all those given must hold), and the hold it renews. */
export interface NoteCondition {
  /** The holder that must still hold the action. */
  holder?: string;
  /** With `holder`: its hold is renewed to this (ms). */
  until?: number;
  /** A field of the entry that must still be unset (`result`: no answer recorded yet). */
  unset?: string;
  /** A field of the entry that must still have this value (`calls`: no other call made since). */
  same?: { field: string; value: unknown };
}

export class HeldActionStore<R extends ActionRecordBase> extends ActionStore<R> {
  /**
   * Keeps `holder`'s hold until `until` (ms) while it works; false when it holds it no more (another
   * took the action up after the hold lapsed, or it is done): the holder must stop.
   */
  async renew(id: string, holder: string, until: number): Promise<boolean> {
    return this.when(id, 'SET heldUntil = :until', 'holder = :h', {}, { ':h': holder, ':until': until });
  }

  /**
   * Sets the action aside, with what it `waits` for, until a pass may take it up: `listedAt` (ms) is
   * its new place in the open index that `unfinished` reads. Gives the hold back; false when
   * `holder` had lost it.
   */
  async park(id: string, holder: string, listedAt: number, waits: Record<string, number>): Promise<boolean> {
    return this.when(
      id,
      'SET gsi1sk = :sk, waits = :w REMOVE holder, heldUntil',
      'holder = :h',
      {},
      {
        ':h': holder,
        ':sk': `${new Date(listedAt).toISOString()}#${id}`,
        ':w': waits,
      },
    );
  }

  /** `answered`, only while `holder` holds the action: false when not written. */
  async answeredWhile(holder: string, id: string, results: UidResult[], changed: string[]): Promise<boolean> {
    return this.when(
      id,
      'SET #status = :s, results = :r, changed = :c',
      'holder = :h',
      { '#status': 'status' },
      { ':s': 'answered', ':r': results, ':c': changed, ':h': holder },
    );
  }

  /**
   * Sets one entry of a map field of the record (`progress.<login>` of an account action), when all
   * the conditions of `only` hold (false when not written).
   */
  async note(
    id: string,
    field: string,
    key: string,
    value: unknown,
    only: NoteCondition = {},
  ): Promise<boolean> {
    const names: Record<string, string> = { '#f': field, '#k': key };
    const values: Record<string, unknown> = { ':v': value };
    const conditions: string[] = [];
    let set = 'SET #f.#k = :v';
    if (only.holder) {
      conditions.push('holder = :h');
      values[':h'] = only.holder;
      if (only.until !== undefined) {
        set += ', heldUntil = :until';
        values[':until'] = only.until;
      }
    }
    if (only.unset) {
      conditions.push('attribute_not_exists(#f.#k.#u)');
      names['#u'] = only.unset;
    }
    if (only.same) {
      conditions.push('#f.#k.#s = :same');
      names['#s'] = only.same.field;
      values[':same'] = only.same.value;
    }
    return this.when(id, set, conditions.join(' AND ') || 'attribute_exists(pk)', names, values);
  }

  /** An update made only when `condition` holds: false when it did not. */
  private async when(
    id: string,
    expression: string,
    condition: string,
    names: Record<string, string>,
    values: Record<string, unknown>,
  ): Promise<boolean> {
    try {
      await this.io.client.send(
        new UpdateItemCommand({
          TableName: this.io.tableName,
          Key: marshall(this.key(id)),
          UpdateExpression: expression,
          ConditionExpression: condition,
          ...(Object.keys(names).length ? { ExpressionAttributeNames: names } : {}),
          ExpressionAttributeValues: marshall(values),
        }),
      );
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw error;
    }
  }
}

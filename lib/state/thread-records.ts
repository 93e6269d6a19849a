/**
 * A digest posted to a Slack app as a thread, while it is being posted: one item per thread
 * (`thread#<destination>` / its key, the digest's Idempotency-Key), holding the delivery ids it
 * covers (gzipped: a digest can cover thousands), where its parent is once posted, and how many
 * replies are in. Written before the parent is posted and after each message Slack accepts, so a
 * crash between Slack's answer and our write repeats that one message and nothing else; deleted
 * once the digest's records are marked sent. A pass resumes the open threads of its destination
 * before anything else (deliver/thread.ts). Loaded when a pass first has a thread to keep
 * (threads.ts, the store the rest of the code holds).
 */
import { gunzipSync, gzipSync } from 'node:zlib';
import { queryAll, type TableIo } from './io.ts';
import { nameInKey } from './limits.ts';
import { marshall, unmarshall } from './marshall.ts';
import {
  ConditionalCheckFailedException,
  DeleteItemCommand,
  GetItemCommand,
  PutItemCommand,
  UpdateItemCommand,
} from './sdk.ts';

export interface ThreadState {
  key: string;
  /** The delivery ids the digest covers, in the order it lists them. */
  ids: string[];
  /** The parent, once posted: the channel's id and its `ts`. */
  parent?: { channel: string; ts: string };
  /** Replies Slack accepted so far, in order. */
  repliesSent: number;
  createdAt: string;
}

function keyOf(destination: string, key: string) {
  return marshall({ pk: `thread#${nameInKey(destination)}`, sk: key });
}

function fromItem(item: Record<string, unknown>): ThreadState {
  const ids =
    typeof item.ids === 'string'
      ? (JSON.parse(gunzipSync(Buffer.from(item.ids, 'base64')).toString('utf8')) as string[])
      : [];
  return {
    key: String(item.sk),
    ids,
    ...(typeof item.channel === 'string' && typeof item.parentTs === 'string'
      ? { parent: { channel: item.channel, ts: item.parentTs } }
      : {}),
    repliesSent: typeof item.repliesSent === 'number' ? item.repliesSent : 0,
    createdAt: typeof item.createdAt === 'string' ? item.createdAt : '',
  };
}

export class ThreadRecords {
  constructor(private readonly io: TableIo) {}

  /** The thread of `key`: the one a crash left, or a new one for `ids`. */
  async begin(destination: string, key: string, ids: readonly string[]): Promise<ThreadState> {
    const createdAt = new Date(this.io.clock.now()).toISOString();
    try {
      this.io.onRequest?.('PutItem');
      await this.io.client.send(
        new PutItemCommand({
          TableName: this.io.tableName,
          Item: {
            ...keyOf(destination, key),
            ...marshall({ repliesSent: 0, createdAt, ids: gzipSync(JSON.stringify(ids)).toString('base64') }),
          },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      );
      return { key, ids: [...ids], repliesSent: 0, createdAt };
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
    this.io.onRequest?.('GetItem');
    const out = await this.io.client.send(
      new GetItemCommand({
        TableName: this.io.tableName,
        Key: keyOf(destination, key),
        ConsistentRead: true,
      }),
    );
    return fromItem(unmarshall(out.Item ?? {}));
  }

  /** The threads of `destination` still being posted. */
  async open(destination: string): Promise<ThreadState[]> {
    const items = await queryAll(this.io, {
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: marshall({ ':pk': `thread#${nameInKey(destination)}` }),
      ConsistentRead: true,
    });
    return items.map((item) => fromItem(unmarshall(item)));
  }

  async parentPosted(
    destination: string,
    key: string,
    parent: { channel: string; ts: string },
  ): Promise<void> {
    await this.set(destination, key, 'SET channel = :c, parentTs = :t', {
      ':c': parent.channel,
      ':t': parent.ts,
    });
  }

  async replied(destination: string, key: string, repliesSent: number): Promise<void> {
    await this.set(destination, key, 'SET repliesSent = :n', { ':n': repliesSent });
  }

  /** Forgets a thread: posted whole, its records marked; or never begun (its parent refused). */
  async finish(destination: string, key: string): Promise<void> {
    this.io.onRequest?.('DeleteItem');
    await this.io.client.send(
      new DeleteItemCommand({ TableName: this.io.tableName, Key: keyOf(destination, key) }),
    );
  }

  private async set(destination: string, key: string, expression: string, values: Record<string, unknown>) {
    this.io.onRequest?.('UpdateItem');
    await this.io.client.send(
      new UpdateItemCommand({
        TableName: this.io.tableName,
        Key: keyOf(destination, key),
        UpdateExpression: expression,
        ExpressionAttributeValues: marshall(values),
      }),
    );
  }
}

/**
 * A dispatch as the heartbeat's cycle on AWS (docs/configuration.md): the dispatcher writes one
 * item per dispatch (how many jobs it handed out), and each worker notes the end of each job it
 * ran, once per job whatever SQS does (a conditional update on the job's number: a job delivered
 * twice is counted once). The worker whose note ends the last job learns so from the same write,
 * and pings success (or the failure, with what failed); the first worker to begin a job of the
 * dispatch pings its start. A dispatch whose jobs never all end pings nothing, so the monitoring
 * service's grace time raises the alarm. Items expire after two days.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from './marshall.ts';
import { ConditionalCheckFailedException, PutItemCommand, UpdateItemCommand } from './sdk.ts';

/** What a dispatch's job carries in its message, besides its stream. */
export interface DispatchRef {
  /** The dispatch's id (unique per dispatch). */
  id: string;
  /** The job's number within it, 0 to total − 1. */
  job: number;
}

export interface JobEnd {
  /** This note ended the dispatch's last job. */
  last: boolean;
  /** Jobs of the dispatch that did not end well so far. */
  failed: number;
  /** What failed, a line a job. */
  notes: string[];
}

const KEEP_SECONDS = 2 * 86_400;
/** The longest note a failed job leaves. */
const NOTE_MAX = 200;

export const dispatchKey = (kind: string, id: string) => ({ pk: `heartbeat#${kind}`, sk: `dispatch#${id}` });

export class DispatchStore {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
  ) {}

  /** Written by the dispatcher before it sends the jobs. */
  async open(kind: string, id: string, total: number, now: number): Promise<void> {
    await this.client.send(
      new PutItemCommand({
        TableName: this.tableName,
        Item: marshall({
          ...dispatchKey(kind, id),
          total,
          done: 0,
          failed: 0,
          openedAt: new Date(now).toISOString(),
          expiresAt: Math.floor(now / 1000) + KEEP_SECONDS,
        }),
      }),
    );
  }

  /** True for the one worker that begins the dispatch's first job (it pings the start). */
  async claimStart(kind: string, ref: DispatchRef, now: number): Promise<boolean> {
    return this.conditional({
      Key: marshall(dispatchKey(kind, ref.id)),
      UpdateExpression: 'SET startedAt = :now',
      ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(startedAt)',
      ExpressionAttributeValues: marshall({ ':now': new Date(now).toISOString() }),
    }).then((item) => item !== undefined);
  }

  /**
   * Notes that a job ended (well or not), once per job: undefined when it was noted already (SQS
   * delivered it again) or the dispatch is unknown.
   */
  async end(kind: string, ref: DispatchRef, ok: boolean, note = ''): Promise<JobEnd | undefined> {
    const item = await this.conditional({
      Key: marshall(dispatchKey(kind, ref.id)),
      UpdateExpression: `ADD ended :job, done :one, failed :bad${ok ? '' : ' SET notes = list_append(if_not_exists(notes, :none), :note)'}`,
      ConditionExpression: 'attribute_exists(pk) AND NOT contains(ended, :n)',
      ExpressionAttributeValues: {
        ...marshall({ ':one': 1, ':bad': ok ? 0 : 1, ':n': ref.job }),
        ':job': { NS: [String(ref.job)] },
        ...(ok ? {} : marshall({ ':none': [], ':note': [note.slice(0, NOTE_MAX)] })),
      },
      ReturnValues: 'ALL_NEW',
    });
    if (!item) return undefined;
    const total = Number(item.total);
    return {
      last: Number(item.done) >= total,
      failed: Number(item.failed) || 0,
      notes: Array.isArray(item.notes) ? item.notes.map(String) : [],
    };
  }

  private async conditional(
    input: Omit<ConstructorParameters<typeof UpdateItemCommand>[0], 'TableName'>,
  ): Promise<Record<string, unknown> | undefined> {
    try {
      const out = await this.client.send(
        new UpdateItemCommand({ TableName: this.tableName, ReturnValues: 'ALL_NEW', ...input }),
      );
      return out.Attributes ? unmarshall(out.Attributes) : {};
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return undefined;
      throw error;
    }
  }
}

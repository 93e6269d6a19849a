/**
 * A DynamoDB client that stops after its `after`-th write, for tests of a process stopped between
 * its writes: that write lands and its caller gets a `Crash` instead of the answer. With `dies`
 * (the default) every later request fails too, as the process is gone; without, only that one
 * answer is lost. `after` 0 never stops. Wraps a real client (dynalite), so what landed is real.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';

export class Crash extends Error {}

const WRITES = new Set([
  'PutItemCommand',
  'UpdateItemCommand',
  'DeleteItemCommand',
  'BatchWriteItemCommand',
  'TransactWriteItemsCommand',
]);

/**
 * @example
 * const run = dyingClient(db.client, 2);
 * await expect(new DeliveryRecords(run.client, table, clock).recordPage(page)).rejects.toThrow(Crash);
 * run.seen; // ['PutItemCommand', 'BatchWriteItemCommand']: the writes made, in order
 */
export function dyingClient(
  base: DynamoDBClient,
  after: number,
  { dies = true }: { dies?: boolean } = {},
): { client: DynamoDBClient; seen: string[] } {
  const seen: string[] = [];
  let dead = false;
  const client = new Proxy(base, {
    get(target, prop) {
      if (prop !== 'send') return Reflect.get(target, prop);
      return async (command: { constructor: { name: string } }) => {
        if (dead) throw new Crash('the process had died');
        const name = command.constructor.name;
        const out = await target.send(command as never);
        if (WRITES.has(name)) {
          seen.push(name);
          if (seen.length === after) {
            dead = dies;
            throw new Crash(`stopped after write ${after} (${name})`);
          }
        }
        return out;
      };
    },
  }) as DynamoDBClient;
  return { client, seen };
}

/**
 * A dry run's table reads through to the real run's, so the dry run predicts the real run.
 *
 * `start --dry-run` writes to a table of its own, named `<real table>-dry-run` (the name says which
 * table it reads through to). This wraps the DynamoDB client the dry run's stores use: every write
 * goes to the dry run's table as the stores address it, and for the keys below, what that table
 * has no record of yet is read from the real run's table instead:
 * - a stream's position (`stream#<id>` / `state`) and the claim mark (`seen#<kind>` / `mark`);
 * - seen items: delivery records (`dlv#…` / `dlv`) and packs (`pack#…`);
 * - silences (`silence` / `<id>`);
 * - the automatic response's account markers and hourly counts (`idauto#…`, `idautohour#…`), so the
 *   dry run decides as the real run would (identity/auto.ts).
 *
 * How. A GetItem or BatchGetItem of such a key that the own table lacks asks the real table for it.
 * A Query of such a partition (packs, silences) is the union of both: the real table's items come
 * with the own table's last page, and a silence the own table holds (one the dry run ended) hides
 * the real run's under the same key. Before a write that reads or depends on what is stored (an
 * UpdateItem, or a PutItem with a condition) to such a key, the real run's item, when the own table
 * has none, is copied into the own table first, leases left out: so the dry run's first lease on a
 * stream starts at the real run's cursor, a delivery record the real run made stops the dry run's
 * conditional create (the item is not new), and later cycles go on from the dry run's own copy.
 *
 * What it never does: write to the real table (it sends the real table only GetItem, BatchGetItem
 * and Query), or read through anything else (leases, the outbox's index, audit, the console's list:
 * those are the dry run's own). A real table that does not exist (no real run yet) has nothing to
 * read.
 */
import type { AttributeValue, DynamoDBClient, QueryCommandInput } from '@aws-sdk/client-dynamodb';
import {
  BatchGetItemCommand,
  ConditionalCheckFailedException,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  ResourceNotFoundException,
  UpdateItemCommand,
} from './sdk.ts';

type Item = Record<string, AttributeValue>;

/** What a dry run's table is named after: its real run's. */
export const DRY_RUN_SUFFIX = '-dry-run';

/** The table of a dry run of the real run whose table is `real`. */
export function dryRunTable(real: string): string {
  return `${real}${DRY_RUN_SUFFIX}`;
}

/** The real run's table a dry run's table reads through to; undefined for a table of no dry run. */
export function realTableOf(table: string): string | undefined {
  return table.endsWith(DRY_RUN_SUFFIX) && table.length > DRY_RUN_SUFFIX.length
    ? table.slice(0, -DRY_RUN_SUFFIX.length)
    : undefined;
}

/** Whether a key's record is read through, and whether the own table's copy hides the real one's. */
function family(pk: string | undefined, sk: string | undefined): 'single' | 'partition' | undefined {
  if (pk === undefined) return undefined;
  if ((pk.startsWith('stream#') && sk === 'state') || (pk.startsWith('seen#') && sk === 'mark'))
    return 'single';
  if (pk.startsWith('dlv#') && sk === 'dlv') return 'single';
  if ((pk.startsWith('idauto#') && sk === 'idauto') || (pk.startsWith('idautohour#') && sk === 'idautohour'))
    return 'single';
  if (pk === 'silence' || pk.startsWith('pack#')) return 'partition';
  return undefined;
}

const keyOf = (item: Item | undefined) => family(item?.pk?.S, item?.sk?.S);
const idOf = (item: Item) => `${item.pk?.S}\u0000${item.sk?.S}`;
/** A lease is the holder's: a copy starts free. */
const LEASE_ATTRIBUTES = ['leaseOwner', 'leaseExpires'];
/** Keys whose copy this process made or found unneeded, so each is looked up once (bounded). */
const SEEN_LIMIT = 10_000;

/** The partition a Query asks for (`pk = :v` in its key condition). */
function queriedPartition(input: QueryCommandInput): string | undefined {
  if (input.IndexName) return undefined;
  const name = /(?:^|\s|\()pk\s*=\s*(:\w+)/.exec(input.KeyConditionExpression ?? '')?.[1];
  return name ? input.ExpressionAttributeValues?.[name]?.S : undefined;
}

/** A projection that also returns the keys, and the keys it added (to take off the answer). */
function withKeys(projection: string | undefined): { projection?: string; strip: string[] } {
  if (!projection) return { strip: [] };
  const names = projection.split(',').map((p) => p.trim());
  const strip = ['pk', 'sk'].filter((k) => !names.includes(k));
  return { projection: [...names, ...strip].join(', '), strip };
}

function stripKeys(items: Item[], strip: readonly string[]): Item[] {
  if (!strip.length) return items;
  return items.map((item) => {
    const copy = { ...item };
    for (const name of strip) delete copy[name];
    return copy;
  });
}

class ReadThrough {
  private realMissing = false;
  private readonly seeded = new Set<string>();

  constructor(
    private readonly client: DynamoDBClient,
    private readonly own: string,
    private readonly real: string,
  ) {}

  // biome-ignore lint/suspicious/noExplicitAny: the SDK's send is overloaded per command.
  async send(command: any, options?: any): Promise<any> {
    const input = command?.input;
    if (command instanceof GetItemCommand && input.TableName === this.own && keyOf(input.Key))
      return this.getItem(command, options);
    if (command instanceof BatchGetItemCommand && input.RequestItems?.[this.own])
      return this.batchGet(command, options);
    if (command instanceof QueryCommand && input.TableName === this.own) {
      const pk = queriedPartition(input);
      if (family(pk, undefined) === 'partition') return this.query(command, options, pk === 'silence');
    }
    const writes =
      (command instanceof UpdateItemCommand ||
        (command instanceof PutItemCommand && input.ConditionExpression)) &&
      input.TableName === this.own;
    if (writes) await this.seed(input.Key ?? { pk: input.Item?.pk, sk: input.Item?.sk });
    return this.client.send(command, options);
  }

  /** `ask` of the real table, or undefined when it does not exist. */
  private async fromReal<T>(ask: () => Promise<T>): Promise<T | undefined> {
    if (this.realMissing) return undefined;
    try {
      return await ask();
    } catch (error) {
      if (!(error instanceof ResourceNotFoundException)) throw error;
      this.realMissing = true;
      return undefined;
    }
  }

  private async getItem(command: InstanceType<typeof GetItemCommand>, options: unknown) {
    const out = await this.client.send(command, options as never);
    if (out.Item) return out;
    const real = await this.fromReal(() =>
      this.client.send(new GetItemCommand({ ...command.input, TableName: this.real })),
    );
    return real?.Item ? { ...out, Item: real.Item } : out;
  }

  private async batchGet(command: InstanceType<typeof BatchGetItemCommand>, options: unknown) {
    const asked = command.input.RequestItems?.[this.own];
    if (!asked?.Keys?.some((k) => keyOf(k))) return this.client.send(command, options as never);
    const { projection, strip } = withKeys(asked.ProjectionExpression);
    const request = { ...asked, ...(projection ? { ProjectionExpression: projection } : {}) };
    const out = await this.client.send(
      new BatchGetItemCommand({ ...command.input, RequestItems: { [this.own]: request } }),
      options as never,
    );
    const found = out.Responses?.[this.own] ?? [];
    const unprocessed = out.UnprocessedKeys?.[this.own]?.Keys ?? [];
    const known = new Set([...found, ...unprocessed].map(idOf));
    const wanted = asked.Keys.filter((k) => keyOf(k) && !known.has(idOf(k)));
    const real = wanted.length
      ? await this.fromReal(() =>
          this.client.send(
            new BatchGetItemCommand({ RequestItems: { [this.real]: { ...request, Keys: wanted } } }),
          ),
        )
      : undefined;
    // What the real table left unprocessed is asked again as the own table's: own first, then real.
    const again = [...unprocessed, ...(real?.UnprocessedKeys?.[this.real]?.Keys ?? [])];
    return {
      ...out,
      Responses: { [this.own]: stripKeys([...found, ...(real?.Responses?.[this.real] ?? [])], strip) },
      UnprocessedKeys: again.length ? { [this.own]: { ...asked, Keys: again } } : {},
    };
  }

  private async query(command: InstanceType<typeof QueryCommand>, options: unknown, hides: boolean) {
    const out = await this.client.send(command, options as never);
    if (out.LastEvaluatedKey) return out;
    const { ExclusiveStartKey: _start, Limit: _limit, ...input } = command.input;
    const { projection, strip } = withKeys(input.ProjectionExpression);
    const realItems: Item[] = [];
    let start: Item | undefined;
    do {
      const page = await this.fromReal(() =>
        this.client.send(
          new QueryCommand({
            ...input,
            ...(projection ? { ProjectionExpression: projection } : {}),
            TableName: this.real,
            ExclusiveStartKey: start,
          }),
        ),
      );
      realItems.push(...(page?.Items ?? []));
      start = page?.LastEvaluatedKey;
    } while (start);
    if (realItems.length === 0) return out;
    // The own table's copy of a key wins, even one its filter left out (a silence it ended).
    const mine = hides ? await this.ownIds(realItems) : new Set<string>();
    const own = out.Items ?? [];
    const merged = [
      ...own,
      ...stripKeys(
        realItems.filter((i) => !mine.has(idOf(i))),
        strip,
      ),
    ];
    if (merged.every((i) => i.sk?.S !== undefined)) {
      const order = input.ScanIndexForward === false ? -1 : 1;
      merged.sort((a, b) => ((a.sk?.S as string) < (b.sk?.S as string) ? -order : order));
    }
    return { ...out, Items: merged, Count: merged.length };
  }

  /** The keys among `items` the own table holds. */
  private async ownIds(items: Item[]): Promise<Set<string>> {
    const ids = new Set<string>();
    for (let i = 0; i < items.length; i += 100) {
      let keys: Item[] = items.slice(i, i + 100).map((item) => ({ pk: item.pk!, sk: item.sk! }));
      while (keys.length) {
        const out = await this.client.send(
          new BatchGetItemCommand({
            RequestItems: {
              [this.own]: { Keys: keys, ConsistentRead: true, ProjectionExpression: 'pk, sk' },
            },
          }),
        );
        for (const item of out.Responses?.[this.own] ?? []) ids.add(idOf(item));
        keys = out.UnprocessedKeys?.[this.own]?.Keys ?? [];
      }
    }
    return ids;
  }

  /** Copies the real run's item under `key` into the own table, when the own table has none. */
  private async seed(key: Item): Promise<void> {
    if (!keyOf(key)) return;
    const id = idOf(key);
    if (this.seeded.has(id)) return;
    const real = await this.fromReal(() =>
      this.client.send(
        new GetItemCommand({ TableName: this.real, Key: { pk: key.pk!, sk: key.sk! }, ConsistentRead: true }),
      ),
    );
    if (real?.Item) {
      const copy = { ...real.Item };
      for (const name of LEASE_ATTRIBUTES) delete copy[name];
      try {
        await this.client.send(
          new PutItemCommand({
            TableName: this.own,
            Item: copy,
            ConditionExpression: 'attribute_not_exists(pk)',
          }),
        );
      } catch (error) {
        // The own table has its own already: it wins.
        if (!(error instanceof ConditionalCheckFailedException)) throw error;
      }
    }
    if (this.seeded.size >= SEEN_LIMIT) this.seeded.clear();
    this.seeded.add(id);
  }
}

/**
 * The client a dry run's stores use on `table`: reads through to the real run's table as the
 * module comment says. A table that names no real run's (`realTableOf`) gets `client` as it is.
 */
export function readThrough(client: DynamoDBClient, table: string): DynamoDBClient {
  const real = realTableOf(table);
  if (!real) return client;
  const through = new ReadThrough(client, table, real);
  // Everything but `send` (its config, destroy) is the client's own.
  const wrapped = Object.create(client) as DynamoDBClient;
  wrapped.send = ((command: unknown, options: unknown) =>
    through.send(command, options)) as DynamoDBClient['send'];
  return wrapped;
}

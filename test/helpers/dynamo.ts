/** A real dynalite over HTTP for a test file, with a fresh table per call of `table()`. */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createRequire } from 'node:module';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll } from 'vitest';
import { type LocalDynamo, startDynalite } from '../../lib/state/local.ts';
import { createDynamoClient, ensureTable } from '../../lib/state/table.ts';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

export interface DynamoFixture {
  readonly endpoint: string;
  readonly client: DynamoDBClient;
  /** Creates a new, empty table and returns its name. */
  table(): Promise<string>;
}

/**
 * dynalite in a child process of its own, in memory, on a port the child picked (so no other
 * process can take it between a choice and a listen); the child ends when this process does.
 */
export async function startDynaliteProcess(): Promise<LocalDynamo> {
  const main = createRequire(import.meta.url).resolve('dynalite');
  const script = `const server = require(${JSON.stringify(main)})({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
server.listen(0, '127.0.0.1', () => console.log('port ' + server.address().port));
process.stdin.on('end', () => process.exit(0)).resume();`;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['pipe', 'pipe', 'inherit'] });
  let seen = '';
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      seen += chunk;
      const found = /port (\d+)/.exec(seen);
      if (found) resolve(Number(found[1]));
    });
    child.once('exit', (code) => reject(new Error(`dynalite exited (code ${code}) before it listened`)));
  });
  return {
    endpoint: `http://127.0.0.1:${port}`,
    close: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.stdin.end();
      await exited;
    },
  };
}

/**
 * `ownProcess`: dynalite in a child process, for a test whose measurements must not wait behind
 * dynalite's work on this process's event loop (the upstream emulator timing requests' arrivals,
 * say, while several product processes write to the table).
 */
export function useDynalite(options: { ownProcess?: boolean } = {}): DynamoFixture {
  let local: LocalDynamo | undefined;
  let client: DynamoDBClient | undefined;
  beforeAll(async () => {
    local = options.ownProcess ? await startDynaliteProcess() : await startDynalite();
    client = createDynamoClient({ endpoint: local.endpoint });
  });
  afterAll(async () => {
    client?.destroy();
    await local?.close();
  });
  return {
    get endpoint() {
      if (!local) throw new Error('dynalite not started');
      return local.endpoint;
    },
    get client() {
      if (!client) throw new Error('dynalite not started');
      return client;
    },
    async table() {
      const name = `t-${randomBytes(4).toString('hex')}`;
      await ensureTable(this.client, name);
      return name;
    },
  };
}

/** One DynamoDB request as a counting client saw it. */
export interface SeenRequest {
  action: string;
  index?: string;
  /** The partition named: a Query's `:pk`, or a GetItem/PutItem/UpdateItem key. */
  pk?: string;
}

/**
 * A client of its own that notes every request it sends (each once, whatever the SDK retries), so
 * a test can say how many requests, of which kind, an operation costs, and that none was sent.
 */
export function countingClient(endpoint: string): { client: DynamoDBClient; requests: SeenRequest[] } {
  const client = createDynamoClient({ endpoint });
  const requests: SeenRequest[] = [];
  type Input = {
    IndexName?: string;
    ExpressionAttributeValues?: Record<string, { S?: string }>;
    Key?: { pk?: { S?: string } };
    Item?: { pk?: { S?: string } };
  };
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as Input;
      const pk = input.ExpressionAttributeValues?.[':pk']?.S ?? input.Key?.pk?.S ?? input.Item?.pk?.S;
      requests.push({
        action: String(context.commandName ?? '').replace(/Command$/, ''),
        ...(input.IndexName ? { index: input.IndexName } : {}),
        ...(pk ? { pk } : {}),
      });
      return next(args);
    },
    { step: 'initialize', name: 'countRequestsForTests' },
  );
  return { client, requests };
}

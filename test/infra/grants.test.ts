/**
 * The DynamoDB grants are exactly what the code uses. The real Lambda handlers run as Lambda runs
 * them, built from their environment (functions/dispatch.ts, functions/worker.ts, functions/api.ts,
 * with the rate governor, the quota store and everything else they wire themselves), against the
 * emulator and dynalite; between them and dynalite, a proxy records every DynamoDB request: its
 * action, its index, and the partition keys it names. What each function sends must equal what
 * the stack grants its role, on the table or the index the stack grants it on, and within the
 * partition keys its grant's `dynamodb:LeadingKeys` condition allows.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createDispatchHandler } from '../../functions/dispatch.ts';
import { createWorkerHandler } from '../../functions/worker.ts';
// The grants' own module, not infra/stack.ts: nothing here synthesizes, and the stack's modules
// (aws-cdk-lib's constructs, cdk-nag) took 1.5 CPU seconds to load.
import {
  API_ACTED_ACTIONS,
  API_ACTION_ACTIONS,
  API_CONSOLE_READ_ACTIONS,
  API_DEAD_INDEX_ACTIONS,
  API_GOVERNOR_ACTIONS,
  API_IDEMPOTENCY_ACTIONS,
  API_INDEX_ACTIONS,
  API_SILENCE_ACTIONS,
  API_STATUS_ACTIONS,
  API_TABLE_ACTIONS,
  API_TEST_PACE_ACTIONS,
  DISPATCHER_TABLE_ACTIONS,
  GOVERNOR_KEY,
  POLLER_INDEX_ACTIONS,
  POLLER_TABLE_ACTIONS,
  SILENCE_KEY,
} from '../../infra/permissions.ts';
import { sha256Hex } from '../../lib/api/auth.ts';
import { acmeAssetIds } from '../api/harness.ts';
import {
  context,
  everyPathConfig,
  lambdaVariables,
  sqsRecord,
  withEnvironment,
} from '../functions/lambda.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { dynamoProxy } from '../helpers/dynamo-proxy.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { type Receiver, startReceiver } from '../helpers/receiver.ts';

const emu = useEmulator({ eventsPerTenant: 10, credentials: 25 });
const db = useDynalite();
let accepting: Receiver;
let refusing: Receiver;

interface Request {
  action: string;
  index?: string;
  /** A Query's `Select` (`COUNT`), when it names one. */
  select?: string;
  /** A read's `ProjectionExpression`, when it names one. */
  projection?: string;
  /** Partition key values the request names (items written, keys read, or the Query's `:pk`). */
  keys: string[];
}

type Item = Record<string, { S?: string }>;
type Write = { PutRequest?: { Item: Item }; DeleteRequest?: { Key: Item } };
interface Input {
  Select?: string;
  ProjectionExpression?: string;
  Item?: Item;
  Key?: Item;
  IndexName?: string;
  ExpressionAttributeValues?: Item;
  /** BatchGetItem: `{ Keys }` per table; BatchWriteItem: a list of writes per table. */
  RequestItems?: Record<string, { Keys?: Item[] } | Write[]>;
}

/**
 * `ensureTable` runs only when DYNAMODB_ENDPOINT points at a local DynamoDB, which the stack never
 * sets (stack.test.ts); these are its requests, not the functions' on AWS.
 */
const LOCAL_ONLY = new Set(['dynamodb:DescribeTable', 'dynamodb:CreateTable']);

/** What one DynamoDB request (JSON protocol: the action in X-Amz-Target) names. */
function describeRequest(target: string, body: string): Request {
  const input = JSON.parse(body || '{}') as Input;
  const keys: string[] = [];
  const pk = (item: Item | undefined) => {
    if (item?.pk?.S) keys.push(item.pk.S);
  };
  pk(input.Item);
  pk(input.Key);
  for (const table of Object.values(input.RequestItems ?? {})) {
    if (Array.isArray(table))
      for (const write of table) pk(write.PutRequest?.Item ?? write.DeleteRequest?.Key);
    else for (const key of table.Keys ?? []) pk(key);
  }
  const queried = input.ExpressionAttributeValues?.[':pk']?.S;
  if (queried && !input.IndexName) keys.push(queried);
  return {
    action: `dynamodb:${target.replace(/^DynamoDB_\d+\./, '')}`,
    ...(input.IndexName ? { index: input.IndexName } : {}),
    ...(input.Select ? { select: input.Select } : {}),
    ...(input.ProjectionExpression ? { projection: input.ProjectionExpression } : {}),
    keys,
  };
}

/** A proxy in front of dynalite that records each request it passes on. */
async function recordingProxy(targetUrl: string) {
  const log: Request[] = [];
  const proxy = await dynamoProxy(targetUrl, (amzTarget, body) => log.push(describeRequest(amzTarget, body)));
  return {
    ...proxy,
    log,
    /** The requests so far, without the local-only table setup, and forgets them. */
    take(): Request[] {
      return log.splice(0).filter((r) => !LOCAL_ONLY.has(r.action));
    },
  };
}

let proxy: Awaited<ReturnType<typeof recordingProxy>>;
beforeAll(async () => {
  accepting = await startReceiver();
  // A permanent refusal: deliveries to it go dead and the destination is marked refused.
  refusing = await startReceiver({ status: 400, body: 'no such hook' });
  proxy = await recordingProxy(db.endpoint);
});
afterAll(async () => {
  await accepting.close();
  await refusing.close();
  await proxy.close();
});

async function variables(): Promise<Record<string, string>> {
  return lambdaVariables({
    apiUrl: emu.url,
    dynamodbEndpoint: proxy.url,
    table: await db.table(),
    // Two event streams: records are created with conditional puts; one credential stream: with
    // batch writes. Both paths run.
    config: everyPathConfig(accepting.url, refusing.url, {
      requestsPerSecond: 100,
      searchRequestsPerSecond: 50,
    }),
  });
}

const actionsOn = (log: Request[], filter: (r: Request) => boolean) =>
  [...new Set(log.filter(filter).map((r) => (r.index ? `${r.action} on ${r.index}` : r.action)))].sort();

describe('DynamoDB grants match the code', () => {
  it('the workers use exactly the granted actions: table actions on the table, Query on gsi1 only', async () => {
    const log = await withEnvironment(await variables(), async () => {
      proxy.take();
      const events = await createWorkerHandler('events');
      const credentials = await createWorkerHandler('credentials');
      const polled = [
        await events(
          {
            Records: [
              sqsRecord({ kind: 'events', stream: 'tenant' }),
              sqsRecord({ kind: 'events', stream: 'group:101' }),
            ],
          },
          context(),
        ),
        await credentials(
          { Records: [sqsRecord({ kind: 'credentials', stream: 'credentials:acme.test' })] },
          context(),
        ),
      ];
      expect(polled).toEqual([{ batchItemFailures: [] }, { batchItemFailures: [] }]);
      return proxy.take();
    });

    // The run did real work: items polled, some delivered, some refused for good.
    expect(accepting.requests.length).toBeGreaterThan(0);
    expect(refusing.requests.length).toBeGreaterThan(0);
    expect(actionsOn(log, (r) => !r.index)).toEqual([...POLLER_TABLE_ACTIONS].sort());
    expect(actionsOn(log, (r) => r.index !== undefined)).toEqual(
      POLLER_INDEX_ACTIONS.map((a) => `${a} on gsi1`),
    );
    const keys = new Set(log.flatMap((r) => r.keys));
    // Among them the shared rate governor's item and the quota's, which the grant must cover.
    expect(keys.has(GOVERNOR_KEY)).toBe(true);
    expect(keys.has('quota')).toBe(true);
    // The workers never touch the API's audit items.
    expect([...keys].filter((k) => k.startsWith('audit#'))).toEqual([]);
  }, 60_000);

  it('the dispatchers use exactly BatchGetItem, on stream items only', async () => {
    const log = await withEnvironment(await variables(), async () => {
      proxy.take();
      const sent: string[] = [];
      for (const kind of ['events', 'credentials'] as const) {
        const dispatch = await createDispatchHandler(kind, {
          send: async (_url, entries) => {
            sent.push(...entries.map((e) => e.MessageBody));
            return [];
          },
        });
        await dispatch();
      }
      expect(sent).toHaveLength(3);
      return proxy.take();
    });
    expect(actionsOn(log, () => true)).toEqual([...DISPATCHER_TABLE_ACTIONS]);
    const keys = log.flatMap((r) => r.keys);
    expect(keys.length).toBe(3);
    // What the grant's condition `ForAllValues:StringLike dynamodb:LeadingKeys stream#*` allows.
    expect(keys.every((k) => k.startsWith('stream#'))).toBe(true);
  }, 60_000);

  it('the API uses exactly its grants: audit items, silences, status reads, counts and dead ids on gsi1, the governor, actions, the console', async () => {
    const token = randomBytes(24).toString('base64url');
    const dir = await mkdtemp(join(tmpdir(), 'ea-grants-'));
    const secrets = join(dir, 'secrets.json');
    const ops = randomBytes(24).toString('base64url');
    await writeFile(
      secrets,
      JSON.stringify({
        apiClients: {
          runbook: sha256Hex(token),
          ops: { digest: sha256Hex(ops), scopes: ['read', 'destinations:write'] },
        },
      }),
    );
    const vars = { ...(await variables()), SECRETS_FILE: secrets };
    const log = await withEnvironment(vars, async () => {
      // A worker runs first, so status has streams and destinations (the catalog) to read.
      const events = await createWorkerHandler('events');
      await events({ Records: [sqsRecord({ kind: 'events', stream: 'tenant' })] }, context());
      proxy.take();
      vi.resetModules();
      const { app } = await import('../../functions/api.ts');
      const id = acmeAssetIds(emu)[0] as number;
      const headers = { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' };
      const toggled = await app.request(`/assets/${id}/toggle`, {
        method: 'POST',
        headers,
        body: '{"is_disabled": true}',
      });
      expect(toggled.status).toBe(200);
      expect((await app.request(`/assets/${id}/audit`, { headers })).status).toBe(200);
      const made = await app.request('/silences', {
        method: 'POST',
        headers,
        body: JSON.stringify({ match: { types: ['paste'] }, until: 'PT1H', reason: 'grants test' }),
      });
      expect(made.status).toBe(201);
      const silence = ((await made.json()) as { silence: { id: string } }).silence.id;
      expect((await app.request('/silences?all=true', { headers })).status).toBe(200);
      expect((await app.request(`/silences/${silence}`, { method: 'DELETE', headers })).status).toBe(200);
      // Ended already: found with GetItem.
      expect((await app.request(`/silences/${silence}`, { method: 'DELETE', headers })).status).toBe(200);
      const status = await app.request('/status', { headers });
      expect(status.status).toBe(200);
      expect(((await status.json()) as { destinations: unknown[] }).destinations.length).toBeGreaterThan(0);
      const uid = (emu.running.emulator.dataset.tenant('acme').events[0]?.item.metadata.uid ?? '') as string;
      const acted = await app.request('/events/actions', {
        method: 'POST',
        headers: { ...headers, 'Idempotency-Key': 'grants-test-1' },
        body: JSON.stringify({ action: 'ignore', uids: [uid] }),
      });
      expect(acted.status).toBe(200);
      // The same key again: answered from its record (GetItem).
      const again = await app.request('/events/actions', {
        method: 'POST',
        headers: { ...headers, 'Idempotency-Key': 'grants-test-1' },
        body: JSON.stringify({ action: 'ignore', uids: [uid] }),
      });
      expect(again.status).toBe(200);
      // A request that changes nothing (refused upstream) frees its key again (DeleteItem).
      const refused = await app.request(`/assets/999999999/toggle`, {
        method: 'POST',
        headers: { ...headers, 'Idempotency-Key': 'grants-test-2' },
        body: '{"is_disabled": true}',
      });
      expect(refused.status).toBeGreaterThanOrEqual(400);
      // The console's routes: the alerts the worker recorded, one's detail, the trail, a dry run,
      // a test message (the destinations read from the config, as the stack hands it), re-queueing.
      const listed = await app.request('/alerts', { headers });
      expect(listed.status).toBe(200);
      const [first] = ((await listed.json()) as { items: { key: string }[] }).items;
      expect(first).toBeDefined();
      expect((await app.request(`/alerts/${encodeURIComponent(first?.key ?? '')}`, { headers })).status).toBe(
        200,
      );
      expect((await app.request('/audit', { headers })).status).toBe(200);
      const dry = await app.request('/silences?dryRun=true', {
        method: 'POST',
        headers,
        body: JSON.stringify({ match: { kind: 'event' } }),
      });
      expect(dry.status).toBe(200);
      const opsHeaders = { Authorization: `Bearer ${ops}`, 'Content-Type': 'application/json' };
      const tested = await app.request('/destinations/ok/test', {
        method: 'POST',
        headers: opsHeaders,
        body: '{}',
      });
      expect(await tested.json()).toMatchObject({ result: 'sent' });
      expect(
        (await app.request('/destinations/ok/test', { method: 'POST', headers: opsHeaders, body: '{}' }))
          .status,
      ).toBe(429);
      const retried = await app.request('/deliveries/retry', {
        method: 'POST',
        headers: opsHeaders,
        body: JSON.stringify({ destination: 'refused', status: 'dead' }),
      });
      expect(((await retried.json()) as { requeued: number }).requeued).toBeGreaterThan(0);
      return proxy.take();
    });

    const index = log.filter((r) => r.index);
    // On the index: counts, and dead deliveries' ids alone: what the grants' conditions allow.
    expect(index.length).toBeGreaterThan(0);
    const counts = index.filter((r) => r.select === 'COUNT');
    const ids = index.filter((r) => r.select === 'SPECIFIC_ATTRIBUTES' && r.projection === 'id');
    expect(counts.length).toBeGreaterThan(0);
    expect(ids.length).toBeGreaterThan(0);
    expect(counts.length + ids.length).toBe(index.length);
    expect(index.every((r) => r.index === 'gsi1')).toBe(true);
    expect(actionsOn(index, () => true)).toEqual(
      [...new Set([...API_INDEX_ACTIONS, ...API_DEAD_INDEX_ACTIONS])].map((a) => `${a} on gsi1`),
    );
    const table = log.filter((r) => !r.index);
    const within = (test: (k: string) => boolean) => (r: Request) => r.keys.length > 0 && r.keys.every(test);
    const audit = table.filter(within((k) => /^audit#/.test(k)));
    const silences = table.filter(within((k) => k === SILENCE_KEY));
    const status = table.filter(within((k) => /^(catalog|quota|stream#.*|dest#.*)$/.test(k)));
    const governor = table.filter(within((k) => k === GOVERNOR_KEY));
    const actions = table.filter(within((k) => /^(action|flags|dlv|fu)#/.test(k)));
    const idempotency = table.filter(within((k) => /^idem#/.test(k)));
    const consoleKeys = table.filter(within((k) => /^(alerts|alert|acted)#/.test(k)));
    const reading = new Set<string>(API_CONSOLE_READ_ACTIONS);
    const consoleReads = consoleKeys.filter((r) => reading.has(r.action));
    const pointers = consoleKeys.filter((r) => !reading.has(r.action));
    const pace = table.filter(within((k) => /^dtest#/.test(k)));
    // Every request is one of these: what the conditions of its grants allow.
    expect(
      audit.length +
        silences.length +
        status.length +
        governor.length +
        actions.length +
        idempotency.length +
        consoleKeys.length +
        pace.length,
    ).toBe(table.length);
    expect(actionsOn(consoleReads, () => true)).toEqual([...API_CONSOLE_READ_ACTIONS].sort());
    // Written only under acted#: what the pointers' grant allows.
    expect(actionsOn(pointers, () => true)).toEqual([...API_ACTED_ACTIONS]);
    expect(pointers.flatMap((r) => r.keys).every((k) => k.startsWith('acted#'))).toBe(true);
    expect(actionsOn(pace, () => true)).toEqual([...API_TEST_PACE_ACTIONS].sort());
    expect(actionsOn(idempotency, () => true)).toEqual([...API_IDEMPOTENCY_ACTIONS].sort());
    expect(actionsOn(actions, () => true)).toEqual([...API_ACTION_ACTIONS].sort());
    expect(actionsOn(audit, () => true)).toEqual([...API_TABLE_ACTIONS].sort());
    expect(actionsOn(silences, () => true)).toEqual([...API_SILENCE_ACTIONS].sort());
    expect(actionsOn(status, () => true)).toEqual([...API_STATUS_ACTIONS].sort());
    expect(actionsOn(governor, () => true)).toEqual([...API_GOVERNOR_ACTIONS].sort());
    expect(status.flatMap((r) => r.keys)).toEqual(
      expect.arrayContaining(['catalog', 'quota', 'stream#tenant']),
    );
  }, 60_000);
});

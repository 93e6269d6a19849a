/**
 * What the API on AWS may do for account actions, and that it is what the code does. With
 * identity in the config the stack grants the API a Query of the `idlog#` partitions (which items
 * name a login) and PutItem, BatchGetItem on `idaction#` (the action's record), hands it the work
 * queue and lets it send there; without identity, none of it. The API built as its Lambda builds
 * it, in front of a proxy that records every DynamoDB request, touches identity's items with
 * exactly those actions, and no verdict, answer or provider state.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  API_IDENTITY_ACTION_ACTIONS,
  API_IDENTITY_LOGIN_ACTIONS,
  IDENTITY_ACTION_KEYS,
  IDENTITY_LOGIN_KEYS,
} from '../../infra/stack.ts';
import { createApiApp } from '../../lib/api/app.ts';
import { sha256Hex } from '../../lib/api/auth.ts';
import { createApiDeps } from '../../lib/api/deps.ts';
import { systemClock } from '../../lib/clock.ts';
import { readEnvironment } from '../../lib/env.ts';
import { IdentityStore } from '../../lib/identity/store.ts';
import { silentLogger } from '../../lib/log.ts';
import { CatalogStore } from '../../lib/state/catalog.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { dynamoProxy } from '../helpers/dynamo-proxy.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { logicalId, statementsOf, template } from '../infra/harness.ts';

const emu = useEmulator({ eventsPerTenant: 1, lateMatchesPerTenant: 0, credentials: 0 });
const db = useDynalite();

/** Each DynamoDB request: its action and the partition keys it names. */
interface Seen {
  action: string;
  keys: string[];
}

type Item = Record<string, { S?: string }>;
function keysOf(body: string): string[] {
  const input = JSON.parse(body || '{}') as {
    Item?: Item;
    Key?: Item;
    RequestItems?: Record<string, { Keys?: Item[] }>;
    ExpressionAttributeValues?: Item;
    IndexName?: string;
  };
  const keys = [input.Item?.pk?.S, input.Key?.pk?.S];
  for (const t of Object.values(input.RequestItems ?? {}))
    if (!Array.isArray(t)) keys.push(...(t.Keys ?? []).map((k) => k.pk?.S));
  if (!input.IndexName) keys.push(input.ExpressionAttributeValues?.[':pk']?.S);
  return keys.filter((k): k is string => typeof k === 'string');
}

/** A proxy in front of dynalite that notes each request. */
async function recordingProxy(target: string) {
  const seen: Seen[] = [];
  const proxy = await dynamoProxy(target, (amzTarget, body) =>
    seen.push({ action: `dynamodb:${amzTarget.replace(/^DynamoDB_\d+\./, '')}`, keys: keysOf(body) }),
  );
  return { ...proxy, seen };
}

let proxy: Awaited<ReturnType<typeof recordingProxy>>;
beforeAll(async () => {
  proxy = await recordingProxy(db.endpoint);
});
afterAll(async () => {
  await proxy.close();
});

const CONFIG = {
  sources: { credentials: { domains: ['acme.com'], lookback: 'P1D' } },
  destinations: { local: { type: 'console' } },
  routes: [{ name: 'all', to: ['local'] }],
  identity: {
    providers: {
      corp: {
        type: 'entra',
        tenantId: '11111111-2222-3333-4444-555555555555',
        clientId: 'app-1',
        clientSecret: { secret: 'corpSecret' },
        domains: ['acme.com'],
      },
    },
  },
};

describe('the stack with identity: what the API may do for account actions', () => {
  it('a Query of idlog#, PutItem and BatchGetItem on idaction#, sending to the events queue', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ea-identity-grants-'));
    const path = join(dir, 'alerts.config.json');
    await writeFile(path, JSON.stringify(CONFIG));
    const t = template({ alertsConfig: path });
    const table = { 'Fn::GetAtt': [logicalId(t, 'AWS::DynamoDB::Table', 'Table'), 'Arn'] };
    const queue = { 'Fn::GetAtt': [logicalId(t, 'AWS::SQS::Queue', 'EventsStreamQueue'), 'Arn'] };
    const api = statementsOf(t, 'ApiRole');
    const about = (s: unknown) => /idlog#|idaction#|sqs:SendMessage/.test(JSON.stringify(s));
    expect(api.filter(about)).toEqual([
      {
        Action: API_IDENTITY_LOGIN_ACTIONS[0],
        Effect: 'Allow',
        Resource: table,
        Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['idlog#*'] } },
      },
      {
        Action: [...API_IDENTITY_ACTION_ACTIONS],
        Effect: 'Allow',
        Resource: table,
        Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['idaction#*'] } },
      },
      { Action: 'sqs:SendMessage', Effect: 'Allow', Resource: queue },
    ]);
    const fn = Object.values(t.findResources('AWS::Lambda::Function')).find((f) =>
      String(f.Properties.Description).includes('HTTP API'),
    );
    expect(JSON.stringify(fn?.Properties.Environment.Variables.WORK_QUEUE_URL)).toContain(
      'EventsStreamQueue',
    );
    expect(fn?.Properties.Environment.Variables.SLACK_ACTIONS).toBeUndefined();
    // Without identity (and without actions.slack), none of it: test/infra/least-privilege.test.ts
    // holds the API of the example config, which has neither, to its exact statements.
  }, 60_000);
});

describe('the API on AWS uses exactly those grants for account actions', () => {
  it('Query on idlog#, PutItem and BatchGetItem on idaction#; no verdict, answer or provider state', async () => {
    const tableName = await db.table();
    const io = { client: db.client, tableName, clock: systemClock };
    await new CatalogStore(io).write({
      streams: [],
      destinations: ['local'],
      configSilences: [],
      followUps: [],
      identity: [{ scope: 'top', provider: 'corp', type: 'entra' }],
    });
    await new IdentityStore(io).keepVerdicts(
      [
        {
          key: 'cred-1',
          scope: 'top',
          login: 'kim@acme.com',
          verdict: { provider: 'corp', verdict: 'at_risk', userId: 'u-1', leakDate: '2026-01-02' },
        },
      ],
      true,
    );
    const token = randomBytes(24).toString('base64url');
    const env = readEnvironment({
      EXPOSURE_API_URL: emu.url,
      EXPOSURE_API_TOKEN: 'emu-acme-token',
      TABLE_NAME: tableName,
      DYNAMODB_ENDPOINT: proxy.url,
    });
    const deps = await createApiDeps(
      env,
      { apiClients: { soar: { digest: sha256Hex(token), scopes: ['identity:act', 'read'] } } },
      { logger: silentLogger },
    );
    try {
      const app = createApiApp({ ...deps, handOff: async () => {} });
      proxy.seen.length = 0;
      const headers = { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' };
      const post = (logins: string[], key?: string) =>
        app.request('/identity/actions', {
          method: 'POST',
          headers: { ...headers, ...(key ? { 'Idempotency-Key': key } : {}) },
          body: JSON.stringify({ action: 'revokeSessions', logins }),
        });
      const made = await post(['kim@acme.com'], 'grants-1');
      expect(made.status).toBe(202);
      const { id } = (await made.json()) as { id: string };
      expect((await post(['kim@acme.com'], 'grants-1')).status).toBe(202);
      expect((await post(['kim@acme.com'])).status).toBe(202);
      expect((await post(['nobody@acme.com'])).status).toBe(400);
      expect((await app.request(`/identity/actions/${encodeURIComponent(id)}`, { headers })).status).toBe(
        200,
      );
      expect((await app.request('/identity/actions/api%3Anone', { headers })).status).toBe(404);
    } finally {
      deps.close();
    }
    const identity = proxy.seen.filter((r) => r.keys.some((k) => /^id[a-z]*#|^idp$/.test(k)));
    const under = (prefixes: string[]) =>
      identity.filter((r) => r.keys.every((k) => prefixes.some((p) => k.startsWith(p.replace('*', '')))));
    const logins = under(IDENTITY_LOGIN_KEYS);
    const actions = under(IDENTITY_ACTION_KEYS);
    const idempotency = under(['idem#*']);
    expect(logins.length + actions.length + idempotency.length).toBe(identity.length);
    expect([...new Set(logins.map((r) => r.action))]).toEqual([...API_IDENTITY_LOGIN_ACTIONS]);
    expect([...new Set(actions.map((r) => r.action))].sort()).toEqual(
      [...API_IDENTITY_ACTION_ACTIONS].sort(),
    );
  }, 30_000);
});

/**
 * The world of the MSSP review (mssp.test.ts): two tenants of the emulator's MSSP dataset, A
 * (1002 Globex) and B (1003 Initech), and the top level, served as the API serves them (the real
 * createApiDeps over the MSSP key: each tenant's toggles, lookups and event actions with its own
 * token, so the emulator's log says for which tenant a call was made), with B's data in every
 * place a route reads: alerts its stream recorded (one uid also recorded by A), a silence, a
 * silence naming B in `sources` only, an account action and the verdict it stands on, a toggle
 * of its asset, an Idempotency-Key its client used. The Lambda (functions/api.ts) reads the same
 * table and the catalog written here.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Hono } from 'hono';
import { createApiApp } from '../../lib/api/app.ts';
import { sha256Hex } from '../../lib/api/auth.ts';
import type { Vars } from '../../lib/api/context.ts';
import { createApiDeps } from '../../lib/api/deps.ts';
import { systemClock } from '../../lib/clock.ts';
import { MSSP_API_KEY } from '../../lib/emulator/dataset.ts';
import { ALL_ENTRA_ROLES } from '../../lib/emulator/identity/index.ts';
import { readEnvironment } from '../../lib/env.ts';
import { providerClients } from '../../lib/identity/index.ts';
import { identitySchema } from '../../lib/identity/schema.ts';
import { IdentityStore } from '../../lib/identity/store.ts';
import { memoryLogger } from '../../lib/log.ts';
import { type Catalog, CatalogStore } from '../../lib/state/catalog.ts';
import type { DynamoFixture } from '../helpers/dynamo.ts';
import type { EmulatorFixture } from '../helpers/emulator.ts';
import { type IdentityProviders, identityProviders } from '../helpers/identity-providers.ts';
import { bearer, JSON_TYPE, newToken, recordAlert as recordAlertIn } from './harness.ts';

export const A = { id: 1002, name: 'Globex', domain: 'globex.test', login: 'ana@globex.test' };
export const B = { id: 1003, name: 'Initech', domain: 'initech.test', login: 'kim@initech.test' };
export const SLACK_SIGNING = 'mssp-slack-signing-secret';
export const SLACK_ACTIONS = {
  signingSecret: { secret: 'slackSigning' },
  teamId: 'T0MSSP',
  allowedUsers: ['U0ANA'],
  responseUrlPrefix: 'http://127.0.0.1:9/',
};

/** What one tenant holds in the world. */
export interface Holdings {
  /** An event's uid, and its key as the tenant's stream recorded it. */
  uid: string;
  key: string;
  /** The uid the emulator gave both tenants' events (recorded by each). */
  sharedKey: string;
  assetId: number;
}

export interface MsspWorld {
  app: Hono<Vars>;
  /** The in-process API's log lines (errors only). */
  logged: string[];
  close(): void;
  table: string;
  /** Bound to A, to B, to both, and to none. */
  tokens: { a: string; b: string; both: string; root: string };
  /** The Lambda's environment and secret object (functions/api.ts reads them at cold start). */
  lambdaEnv: Record<string, string>;
  shared: string;
  a: Holdings;
  b: Holdings & {
    silenceId: string;
    /** A silence made unbound whose match names B in `sources` only. */
    sourcesSilenceId: string;
    /** A silence made unbound whose match names A and B. */
    mixedSilenceId: string;
    actionId: string;
    /** The Idempotency-Key B's client made a silence with. */
    idempotencyKey: string;
    /** The delivery record of B's event. */
    deliveryId: string;
  };
  idp: IdentityProviders;
  /** Every string of B's that no answer to A may hold (a name in any case, ids, keys, a login). */
  bStrings(): string[];
}

/** An alert as the stream of `tenant` records it (harness.ts), with its key and its delivery's id. */
async function recordAlert(db: DynamoFixture, table: string, tenant: number | undefined, uid: string) {
  const created = await recordAlertIn({ client: db.client, name: table }, uid, tenant);
  return { key: tenant === undefined ? uid : `${tenant}:${uid}`, deliveryId: created[0]?.id as string };
}

export async function msspWorld(emu: EmulatorFixture, db: DynamoFixture, dir: string): Promise<MsspWorld> {
  const table = await db.table();
  const dataset = emu.running.emulator.dataset;
  const idp = await identityProviders({
    entra: {
      roles: ALL_ENTRA_ROLES,
      users: [A.login, B.login].map((userPrincipalName) => ({ userPrincipalName })),
    },
  });
  const identityOf = (domain: string) =>
    identitySchema.parse({ providers: idp.providers({ entra: [domain] }) });
  const problems: string[] = [];
  const providers = providerClients(
    {
      tenants: [
        { id: A.id, identity: identityOf(A.domain) },
        { id: B.id, identity: identityOf(B.domain) },
      ],
    } as never,
    idp.secrets,
    problems,
  );
  if (problems.length) throw new Error(problems.join('; '));

  const known: Omit<Catalog, 'writtenAt'> = {
    streams: ['tenant', `tenant:${A.id}`, `tenant:${B.id}`],
    destinations: ['hook'],
    configSilences: [],
    followUps: [],
    tenants: [
      { id: A.id, name: A.name, domains: [A.domain] },
      { id: B.id, name: B.name, domains: [B.domain] },
    ],
    domains: ['acme.test'],
    identity: [
      { scope: A.id, provider: 'corp', type: 'entra' },
      { scope: B.id, provider: 'corp', type: 'entra' },
    ],
  };
  const io = { client: db.client, tableName: table, clock: systemClock };
  await new CatalogStore(io).write(known);

  const tokens = { a: newToken(), b: newToken(), both: newToken(), root: newToken() };
  const secrets = {
    apiClients: {
      a: { digest: sha256Hex(tokens.a), role: 'admin', tenants: [A.name] },
      b: { digest: sha256Hex(tokens.b), role: 'admin', tenants: [B.id] },
      both: { digest: sha256Hex(tokens.both), role: 'responder', tenants: [A.name, B.name] },
      root: { digest: sha256Hex(tokens.root), role: 'admin' },
    },
    slackSigning: SLACK_SIGNING,
    ...idp.secrets,
  };
  const env = {
    EXPOSURE_API_URL: emu.url,
    EXPOSURE_API_KEY: MSSP_API_KEY.key,
    TABLE_NAME: table,
    DYNAMODB_ENDPOINT: db.endpoint,
  };
  const logger = memoryLogger('error');
  const deps = await createApiDeps(readEnvironment(env), secrets as never, {
    logger,
    known,
    identity: { providers },
    slackActions: SLACK_ACTIONS,
    upstream: { backoffBaseMs: 10, backoffMaxMs: 50, timeoutMs: 2_000, maxAttempts: 1 },
  });
  const app = createApiApp(deps);
  const secretsFile = join(dir, 'mssp.secrets.json');
  await writeFile(secretsFile, JSON.stringify(secrets));

  // Each tenant's first event, as its stream recorded it; one uid both tenants were given.
  const eventOf = (tenant: number) => dataset.tenant(tenant).events[0]?.item.metadata.uid as string;
  const assetOf = (tenant: number) => [...dataset.tenant(tenant).assets.keys()][0] as number;
  const [sharedEvent] = dataset.appendSharedEvents([A.id, B.id], 1);
  const shared = sharedEvent?.item.metadata.uid as string;
  const recorded = {
    a: await recordAlert(db, table, A.id, eventOf(A.id)),
    b: await recordAlert(db, table, B.id, eventOf(B.id)),
    aShared: await recordAlert(db, table, A.id, shared),
    bShared: await recordAlert(db, table, B.id, shared),
  };
  await recordAlert(db, table, undefined, 'paste/top/1');

  const send = async (token: string, method: string, path: string, body?: unknown, key?: string) => {
    const res = await app.request(path, {
      method,
      headers: { ...bearer(token), ...JSON_TYPE, ...(key ? { 'Idempotency-Key': key } : {}) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    return res.json() as Promise<Record<string, unknown>>;
  };
  const silence = (await send(tokens.root, 'POST', '/silences', {
    match: { tenants: [B.name] },
    until: 'PT4H',
    reason: `${B.name} maintenance window`,
  })) as { silence: { id: string } };
  const bySources = (await send(tokens.root, 'POST', '/silences', {
    match: { sources: [`tenant:${B.id}`] },
    until: 'PT4H',
    reason: `${B.name} stream quiet`,
  })) as { silence: { id: string } };
  const mixed = (await send(tokens.root, 'POST', '/silences', {
    match: { tenants: [A.id, B.id] },
    until: 'PT4H',
    reason: 'both tenants',
  })) as { silence: { id: string } };
  const idempotencyKey = 'mssp-review-key-1';
  await send(
    tokens.b,
    'POST',
    '/silences',
    { match: { types: ['leak'] }, until: 'PT1H', reason: 'b replay bait' },
    idempotencyKey,
  );
  await send(tokens.root, 'POST', `/assets/${assetOf(B.id)}/toggle?tenant=${B.name}`, { is_disabled: false });

  await new IdentityStore(io).keepVerdicts(
    [A, B].map((t) => ({
      key: `${t.id}:cred-${t.name}`,
      verdict: { provider: 'corp', verdict: 'at_risk', leakDate: '2026-01-02' },
      scope: t.id,
      login: t.login,
    })),
    true,
  );
  const action = (await send(tokens.root, 'POST', '/identity/actions', {
    action: 'revokeSessions',
    logins: [B.login],
    tenant: B.id,
    reason: 'in a combo list',
  })) as { id: string };

  const b = {
    uid: eventOf(B.id),
    key: recorded.b.key,
    sharedKey: recorded.bShared.key,
    assetId: assetOf(B.id),
    silenceId: silence.silence.id,
    sourcesSilenceId: bySources.silence.id,
    mixedSilenceId: mixed.silence.id,
    actionId: action.id,
    idempotencyKey,
    deliveryId: recorded.b.deliveryId,
  };
  return {
    app,
    logged: logger.lines,
    close: () => deps.close(),
    table,
    tokens,
    lambdaEnv: {
      ...env,
      SECRETS_FILE: secretsFile,
      SLACK_ACTIONS: JSON.stringify(SLACK_ACTIONS),
      LOG_LEVEL: 'error',
    },
    shared,
    a: { uid: eventOf(A.id), key: recorded.a.key, sharedKey: recorded.aShared.key, assetId: assetOf(A.id) },
    b,
    idp,
    bStrings: () => [
      B.name,
      B.domain,
      B.login,
      b.uid,
      b.key,
      b.sharedKey,
      b.silenceId,
      b.sourcesSilenceId,
      b.mixedSilenceId,
      b.actionId,
      b.deliveryId,
      'b replay bait',
    ],
  };
}

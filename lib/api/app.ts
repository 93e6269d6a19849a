/**
 * Longer than 300 lines because every route's wiring, in the order its checks run, reads best in
 * one place; what a route does lives in its own module.
 *
 * The HTTP API of docs/api.md, as one Hono app: the same object serves
 * `serve`, `npm start` and Lambda (functions/api.ts). Asset toggles and their audit trail, the
 * run-time silences (silences.ts), the status read (state/status.ts), actions on events
 * (actions.ts), and actions on leaked logins' accounts (identity-routes.ts).
 *
 * Checks run in the documented order: route and method (404, 405), auth (401), scope (403, audited),
 * content type and size (415, 413), validation (400), and only then the upstream or the table; every answer is
 * JSON. One log line per request, with its request id (also sent back as `X-Request-Id`); headers
 * are never logged, so a token cannot be.
 *
 * The POSTs that act take an `Idempotency-Key` (idempotency.ts): a repeat answers as the first
 * did, a key reused with another request is 422, one still running 409.
 *
 * The audit trail (toggle.ts, silences.ts) records every toggle and every silence change that
 * passed auth and validation, whatever then happened; a request outside its client's scopes (403),
 * or reusing an Idempotency-Key with another request (422), is audited as a refusal (who, what,
 * why). Requests refused otherwise (401, 404, 405, 413, 415, 400, 409) are not audited: they have
 * no client name, or nothing to file them under.
 * They are in the request log, with their error code and, once authenticated, the client's name.
 *
 * @example
 * const app = createApiApp(deps);
 * const res = await app.request('/health'); // 200 {"status":"ok"}
 */
import { randomUUID } from 'node:crypto';
import { brotliDecompressSync } from 'node:zlib';
import { type Context, Hono, type MiddlewareHandler } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { methodNotAllowed } from 'hono/method-not-allowed';
import type { ActDeps } from '../actions/events.ts';
import type { LookupAnswer, LookupQuery } from '../actions/lookup.ts';
import type { SlackWork } from '../actions/slack-work.ts';
import { addConsoleRoutes } from '../console/routes.ts';
import type { Logger } from '../log.ts';
import type { Metrics } from '../metrics.ts';
import type { Silence } from '../rules/silences.ts';
import type { AuditStore, RefusalAuditStore } from '../state/audit.ts';
import type { Status } from '../state/status.ts';
import { type ActRouteDeps, addActRoutes } from './act-routes.ts';
import {
  ALL_SCOPES,
  type ApiCaller,
  ApiClientAuth,
  type ApiClients,
  parseBearer,
  type Scope,
} from './auth.ts';
import { readJsonText } from './body.ts';
import { addConsoleApiRoutes, type ConsoleDeps } from './console-api.ts';
import type { Vars } from './context.ts';
import { ApiError, unauthorized } from './errors.ts';
import { answerOnce, type IdempotencyDeps } from './idempotency.ts';
import { addIdentityRoutes, type IdentityApiDeps } from './identity-routes.ts';
import {
  MAX_BODY_BYTES,
  parseAll,
  parseAssetId,
  parseAuditLimit,
  parseJson,
  parseToggleBody,
} from './schemas.ts';
import { addSilence, expireSilence, type SilenceDeps } from './silences.ts';
import type { SlackSettings } from './slack.ts';
import { bindSilenceRequest, findTenant, sees, silenceSeenBy, statusFor, tenantToActAs } from './tenancy.ts';
import { type AssetToggler, toggleAsset } from './toggle.ts';

export interface ApiDeps extends SilenceDeps, IdempotencyDeps {
  upstream: AssetToggler;
  audit: AuditStore;
  /** Where requests refused once their client is known are recorded (403, and 422 for a reused Idempotency-Key). */
  refusals?: RefusalAuditStore;
  /** Acting on events (actions/events.ts): `POST /events/actions`. */
  act?: ActDeps;
  /** Requests from the Slack app (slack.ts), with `actions.slack` configured. */
  slack?: SlackSettings;
  metrics?: Metrics;
  /**
   * Hands a Slack request's work on, to be done after its answer, and an account action recorded
   * by a process without the providers' secrets: on AWS to the queue a worker reads; under serve
   * and npm start to this process (actions/slack-work.ts).
   */
  handOff?: (work: SlackWork) => Promise<void>;
  /** POSTs an answer to a Slack `response_url` (tests give a stand-in); default fetch. */
  post?: (url: string, body: unknown) => Promise<void>;
  /** Acting on accounts (identity-routes.ts): `POST /identity/actions`, `GET /identity/actions/{id}`. */
  identity?: IdentityApiDeps;
  /** What the console reads and acts through (console-api.ts): alerts, audit, tests, re-queueing. */
  console?: ConsoleDeps;
  /** What the leak store knows (actions/lookup.ts): `GET /lookup`. */
  lookup?: (query: LookupQuery) => Promise<LookupAnswer>;
  /** The tenants' and the top level's credential domains: what a client bound to them may look up. */
  credentialDomains?: ActRouteDeps['credentialDomains'];
  /** With tenants: the tenant a Slack channel's routes carry alone, for its lookups. */
  tenantOfChannel?: (channel: string) => Promise<number | undefined>;
  /** A `tenants` entry's asset toggles, sent with its own token (`?tenant=`). */
  upstreamFor?: (tenant: number) => AssetToggler;
  /** `GET /status` (state/status.ts): read from the table alone. */
  status: { read(): Promise<Status> };
  /** Reads the `apiClients` map (client name to SHA-256 hex digest of its token) afresh. */
  loadApiClients: () => Promise<ApiClients>;
  logger: Logger;
  /** Where each request's line goes: `logger` unless given (npm start: a file, cli/request-log.ts). */
  requestLog?: Logger;
  /** Milliseconds since the epoch. */
  now: () => number;
  /** Total budget of one upstream call, retries included; keep it under the Lambda timeout. */
  upstreamTimeoutMs: number;
  /** Least time between re-reads of `apiClients` caused by unknown tokens; default 60 s. */
  authReloadIntervalMs?: number;
  /** Age after which `apiClients` is re-read anyway, so a removed client stops working; default 5 min. */
  authMaxAgeMs?: number;
  /**
   * The Function URL authenticates callers with IAM (API_AUTH=AWS_IAM): the caller's IAM identity
   * is the client, and no bearer token is read.
   */
  iamCallers?: boolean;
}

/** `iam:<caller ARN>` from a Function URL event's IAM authorizer, when there is one. */
export function iamCaller(env: unknown): string | undefined {
  const iam = (
    env as { event?: { requestContext?: { authorizer?: { iam?: { userArn?: unknown } } } } } | undefined
  )?.event?.requestContext?.authorizer?.iam;
  return typeof iam?.userArn === 'string' && iam.userArn ? `iam:${iam.userArn}` : undefined;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

function shortPath(path: string): string {
  return path.length > 200 ? `${path.slice(0, 200)}…` : path;
}

export function createApiApp(deps: ApiDeps): Hono<Vars> {
  const auth = new ApiClientAuth({
    load: deps.loadApiClients,
    ...(deps.console ? { tenants: deps.console.tenants } : {}),
    now: deps.now,
    logger: deps.logger,
    reloadIntervalMs: deps.authReloadIntervalMs,
    maxAgeMs: deps.authMaxAgeMs,
  });
  const app = new Hono<Vars>();

  const sendError = (c: Context<Vars>, error: ApiError): Response => {
    c.set('errorCode', error.code);
    return c.json(error.body, error.status as 400, error.headers);
  };

  // Outermost, so it sees the final status (405 included) and stamps every answer with the id.
  app.use(async (c, next) => {
    const requestId = randomUUID();
    c.set('requestId', requestId);
    const started = performance.now();
    await next();
    c.res.headers.set('X-Request-Id', requestId);
    const status = c.res.status;
    const incoming = c.req.header('x-request-id');
    const fields = {
      requestId,
      ...(incoming && REQUEST_ID.test(incoming) ? { callerRequestId: incoming } : {}),
      method: c.req.method,
      // The path only: a query string is the one place a careless caller might put a token.
      path: shortPath(c.req.path),
      status,
      durationMs: Math.round(performance.now() - started),
      ...(c.get('client') ? { client: c.get('client') } : {}),
      ...(c.get('errorCode') ? { code: c.get('errorCode') } : {}),
    };
    const log = deps.requestLog ?? deps.logger;
    if (status >= 500) log.warn('request', fields);
    else log.info('request', fields);
  });

  app.use(
    methodNotAllowed({
      app,
      onMethodNotAllowed: (c, methods) =>
        sendError(
          c as Context<Vars>,
          new ApiError(
            'method_not_allowed',
            `${c.req.method} is not allowed here; use ${methods.join(' or ')}`,
            {
              headers: { Allow: methods.join(', ') },
            },
          ),
        ),
    }),
  );

  /** Who is calling: the IAM caller (every scope: its IAM policy decides), or the bearer token's client. */
  const identify = async (c: Context<Vars>): Promise<ApiCaller> => {
    if (deps.iamCallers) {
      // Behind a Function URL with AWS_IAM auth, AWS has checked the SigV4 signature (which uses
      // the Authorization header); the caller's IAM identity is the client.
      const caller = iamCaller(c.env);
      if (!caller) throw unauthorized('this API takes IAM-signed requests (SigV4) only', false);
      return { name: caller, scopes: ALL_SCOPES };
    }
    const bearer = parseBearer(c.req.header('authorization'));
    if (bearer.kind === 'missing') throw unauthorized('send Authorization: Bearer <token>', false);
    if (bearer.kind === 'malformed') {
      throw unauthorized('the Authorization header must be "Bearer <token>"', false);
    }
    let caller: ApiCaller | undefined;
    try {
      caller = await auth.identify(bearer.token);
    } catch (error) {
      deps.logger.error('cannot check bearer tokens: the API clients are unavailable', {
        requestId: c.get('requestId'),
        error,
      });
      throw new ApiError('internal_error', 'cannot check credentials right now; retry in a minute');
    }
    if (caller === undefined) throw unauthorized('the bearer token is not valid', true);
    return caller;
  };

  /** A 403 for a request outside its client's scopes, audited (who, what, which scope). */
  const forbid = async (c: Context<Vars>, scope: string): Promise<never> => {
    await deps.refusals?.record({
      at: new Date(deps.now()).toISOString(),
      requestId: c.get('requestId'),
      client: c.get('client') as string,
      method: c.req.method,
      path: shortPath(c.req.path),
      scope,
      status: 403,
    });
    throw new ApiError(
      'forbidden',
      `the client "${c.get('client')}" does not have the scope ${scope} this request needs`,
    );
  };

  /**
   * Auth (401), then the scope (403, audited), before anything reads the request. Given several
   * scopes, any one will do: a route whose exact scope depends on its body (an account action)
   * checks that one with `forbid` once it has read which.
   */
  const need =
    (...scopes: Scope[]): MiddlewareHandler<Vars> =>
    async (c, next) => {
      const caller = await identify(c);
      c.set('client', caller.name);
      c.set('scopes', caller.scopes);
      if (caller.binding) c.set('binding', caller.binding);
      if (!scopes.some((scope) => caller.scopes.has(scope))) await forbid(c, scopes.join(' or '));
      await next();
    };

  /** The config's tenants by id and name, that requests name theirs by. */
  const knownTenants = async () => (await deps.console?.tenants()) ?? [];

  /**
   * The tenant a toggle acts as (`?tenant=`, an id or a name; tenancy.ts): a bound client's within
   * its tenants; an unbound client's any of the config's, or the top level's (undefined) unnamed.
   */
  const toggleTenant = async (c: Context<Vars>): Promise<number | undefined> => {
    const wanted = c.req.query('tenant');
    // The top level's, as before tenants could be named: no read of the config's tenants.
    if (wanted === undefined && !c.get('binding')) return undefined;
    const known = await knownTenants();
    const choice = tenantToActAs(c.get('binding'), known, wanted);
    if (!('unbound' in choice)) return choice.tenant;
    if (wanted === undefined) return undefined;
    const found = findTenant(known, wanted);
    if (!found)
      throw new ApiError(
        'invalid_request',
        `tenant: no tenant named ${JSON.stringify(wanted.slice(0, 40))}${known.length ? ` (the config has ${known.map((t) => t.name).join(', ')})` : ' (the config names no tenants)'}; give its id or name`,
      );
    return found.id;
  };

  app.get('/health', (c) => c.json({ status: 'ok' as const }));

  // Generated by `npm run docs` from openapi.ts, packed; loaded and unpacked once, on the first
  // request for it (the API's start does not carry it).
  let openApi: Record<string, unknown> | undefined;
  app.get('/openapi.json', async (c) => {
    openApi ??= JSON.parse(
      brotliDecompressSync(
        Buffer.from((await import('./openapi-packed.ts')).OPENAPI_PACKED, 'base64'),
      ).toString('utf8'),
    ) as Record<string, unknown>;
    return c.json(openApi);
  });

  app.post('/assets/:asset_id/toggle', need('assets:write'), async (c) => {
    const text = await readJsonText(c.req.raw, MAX_BODY_BYTES);
    const assetId = parseAssetId(c.req.param('asset_id'));
    const body = parseToggleBody(text);
    const tenant = await toggleTenant(c);
    const upstream = tenant === undefined ? deps.upstream : deps.upstreamFor?.(tenant);
    if (!upstream) throw new ApiError('internal_error', 'this service cannot toggle a tenant’s assets');
    return answerOnce(c, deps, 'POST /assets/{asset_id}/toggle', body, async () => {
      const asset = await toggleAsset(
        { ...deps, upstream },
        {
          client: c.get('client') as string,
          assetId,
          isDisabled: body.is_disabled,
          requestId: c.get('requestId'),
          tenant: tenant ?? 'top',
        },
      );
      return { status: 200, body: { asset } };
    });
  });

  app.get('/assets/:asset_id/audit', need('read'), async (c) => {
    const assetId = parseAssetId(c.req.param('asset_id'));
    const limit = parseAuditLimit(c.req.query('limit'));
    const items = await deps.audit.list(assetId, limit);
    const binding = c.get('binding');
    // A bound client sees the toggles made within its tenants; one that kept no tenant, none.
    const seen = binding
      ? items.filter(
          (e) => e.tenant !== undefined && sees(binding, e.tenant === 'top' ? undefined : e.tenant),
        )
      : items;
    return c.json({ items: seen });
  });

  // The console's API (console-api.ts); before POST /silences, whose dry run it answers.
  addConsoleApiRoutes(app, deps, { need, forbid });

  app.get('/silences', need('read'), async (c) => {
    const all = parseAll(c.req.query('all'));
    const items = all ? await deps.silences.all() : await deps.silences.active();
    const binding = c.get('binding');
    if (!binding) return c.json({ items });
    const known = await knownTenants();
    const name = c.get('client') as string;
    return c.json({ items: items.filter((s) => silenceSeenBy(name, binding, known, s)) });
  });

  app.post('/silences', need('silences:write'), async (c) => {
    const text = await readJsonText(c.req.raw, MAX_BODY_BYTES);
    const body = bindSilenceRequest(
      c.get('binding'),
      c.get('binding') ? await knownTenants() : [],
      parseJson(text, '{"match": {...}, "until": "PT4H", "reason": "..."}'),
    );
    return answerOnce(c, deps, 'POST /silences', body, async (id, startedAt) => ({
      status: 201,
      body: await addSilence(deps, {
        client: c.get('client') as string,
        requestId: c.get('requestId'),
        body,
        ...(id ? { once: { id, at: startedAt } } : {}),
      }),
    }));
  });

  app.delete('/silences/:id', need('silences:write'), async (c) => {
    const binding = c.get('binding');
    const known = binding ? await knownTenants() : [];
    const { silence } = await expireSilence(deps, {
      client: c.get('client') as string,
      requestId: c.get('requestId'),
      id: c.req.param('id'),
      ...(binding
        ? { within: (s: Silence) => silenceSeenBy(c.get('client') as string, binding, known, s) }
        : {}),
    });
    return c.json({ silence });
  });

  app.get('/status', need('read'), async (c) =>
    c.json(statusFor(c.get('binding'), await deps.status.read())),
  );

  // Acting on an alert and looking things up (act-routes.ts), Slack's doors included.
  addActRoutes(app, deps, need);
  // Acting on a leaked login's account (identity-routes.ts).
  addIdentityRoutes(app, deps, { need, forbid });
  // The console's page and GET /whoami (console/routes.ts).
  addConsoleRoutes(app, need, deps);

  app.notFound((c) =>
    sendError(c, new ApiError('not_found', `no route for ${c.req.method} ${shortPath(c.req.path)}`)),
  );

  app.onError((error, c) => {
    if (error instanceof ApiError) return sendError(c, error);
    if (error instanceof HTTPException && error.status < 500) {
      // Hono's own refusals (a malformed request it could not parse), still as JSON.
      return sendError(c, new ApiError('invalid_request', error.message || 'the request is malformed'));
    }
    deps.logger.error('unhandled error', { requestId: c.get('requestId'), error });
    return sendError(c, new ApiError('internal_error', 'something failed inside this service; see its logs'));
  });

  return app;
}

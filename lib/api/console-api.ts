/**
 * The API routes the console reads and acts through (docs/console.md; the page itself and
 * `GET /whoami` are lib/console/routes.ts): `GET /alerts`, `GET /alerts/{key}`, `GET /audit` (scope `read`), `POST /silences?dryRun=true`
 * (`silences:write` or `read`), `POST /destinations/{name}/test` and `POST /deliveries/retry`
 * (`destinations:write`). Their work loads with their first request (alerts.ts, console-acts.ts),
 * so the API's start bundle carries only this wiring.
 *
 * Mounted before `POST /silences`: a dry run is answered here, anything else goes on to it.
 */
import type { Context, Hono } from 'hono';
import type { TableIo } from '../state/io.ts';
import type { TenantName } from './alert-query.ts';
import { readBounded, readJsonText } from './body.ts';
import type { TestableDestinations } from './console-acts.ts';
import type { Vars } from './context.ts';
import { ApiError } from './errors.ts';
import { answerOnce, type IdempotencyDeps } from './idempotency.ts';
import type { ScopeGuard } from './identity-routes.ts';
import { MAX_BODY_BYTES, parseJson } from './schemas.ts';
import { bindSilenceRequest, unboundOnly } from './tenancy.ts';

/** What the console's routes read and send with. */
export interface ConsoleDeps {
  io: TableIo;
  /** The config's tenants (names for ids, and the dead queues' partitions). */
  tenants(): Promise<readonly TenantName[]>;
  /** The config's destinations with their secrets, for test messages; none: tests are refused. */
  destinations?(): Promise<TestableDestinations>;
  /** Test messages' POST (tests give a stand-in); default fetch. */
  post?: import('../deliver/post.ts').HttpPost;
}

export type ConsoleRouteDeps = IdempotencyDeps & { console?: ConsoleDeps };

function setUp(deps: ConsoleRouteDeps): ConsoleDeps {
  if (!deps.console)
    throw new ApiError('internal_error', 'the console’s routes are not set up in this service');
  return deps.console;
}

/** A body that may be absent (a POST with nothing to say), else JSON. */
async function optionalJson(c: Context<Vars>): Promise<unknown> {
  if (!c.req.header('content-type')) {
    if ((await readBounded(c.req.raw, MAX_BODY_BYTES)).byteLength === 0) return {};
    throw new ApiError('unsupported_media_type', 'send the body as Content-Type: application/json');
  }
  const text = await readJsonText(c.req.raw, MAX_BODY_BYTES);
  return text.trim() === '' ? {} : parseJson(text, '{}');
}

export function addConsoleApiRoutes(app: Hono<Vars>, deps: ConsoleRouteDeps, guard: ScopeGuard): void {
  app.get('/alerts', guard.need('read'), async (c) => {
    const { listAlerts } = await import('./alerts.ts');
    return c.json(await listAlerts(setUp(deps), c.req.queries(), c.get('binding')));
  });

  app.get('/alerts/:key', guard.need('read'), async (c) => {
    const { alertDetail } = await import('./alerts.ts');
    return c.json(await alertDetail(setUp(deps), c.req.param('key'), c.get('binding')));
  });

  app.get('/audit', guard.need('read'), async (c) => {
    const { auditPage } = await import('./alerts.ts');
    const binding = c.get('binding');
    return c.json(
      await auditPage(setUp(deps), c.req.queries(), {
        name: c.get('client') as string,
        ...(binding ? { binding } : {}),
      }),
    );
  });

  // A middleware, not a route: POST /silences stays one route (its Allow, its OpenAPI path).
  app.use('/silences', async (c, next) => {
    const dry = c.req.query('dryRun');
    if (c.req.method !== 'POST' || dry === undefined || dry === 'false') return next();
    // Counting changes nothing: a `read` client may ask too.
    let body: unknown;
    await guard.need('silences:write', 'read')(c, async () => {
      body = parseJson(await readJsonText(c.req.raw, MAX_BODY_BYTES), '{"match": {...}}');
      if (dry !== 'true') throw new ApiError('invalid_request', 'dryRun must be true or false');
    });
    const { dryRunSilence } = await import('./console-acts.ts');
    const console = setUp(deps);
    const binding = c.get('binding');
    // Counted as the silence would be made: within the client's tenants.
    const bound = binding ? bindSilenceRequest(binding, await console.tenants(), body) : body;
    return c.json(await dryRunSilence(console, bound, binding));
  });

  app.post('/destinations/:name/test', guard.need('destinations:write'), async (c) => {
    unboundOnly(c, 'a test message');
    const name = c.req.param('name');
    const body = await optionalJson(c);
    if (!body || typeof body !== 'object' || Array.isArray(body) || Object.keys(body).length > 0)
      throw new ApiError('invalid_request', 'a test takes no body (or {})');
    const console = setUp(deps);
    const destinations = console.destinations;
    if (!destinations)
      throw new ApiError(
        'internal_error',
        'this service has no destinations to test (it has no alert config)',
      );
    return answerOnce(c, deps, 'POST /destinations/{name}/test', { name }, async () => {
      const { testDestination } = await import('./console-acts.ts');
      return {
        status: 200,
        body: await testDestination(
          { io: console.io, destinations, ...(console.post ? { post: console.post } : {}) },
          name,
        ),
      };
    });
  });

  app.post('/deliveries/retry', guard.need('destinations:write'), async (c) => {
    unboundOnly(c, 're-queueing dead deliveries');
    const body = parseJson(await readJsonText(c.req.raw, MAX_BODY_BYTES), '{"ids": [...]}');
    const { retryDeliveries, retryRequest } = await import('./console-acts.ts');
    // Checked before answerOnce, which a dry run stops at (dry-run.ts): a bad body is still a 400.
    retryRequest(body);
    return answerOnce(c, deps, 'POST /deliveries/retry', body, async () => ({
      status: 200,
      body: await retryDeliveries(setUp(deps), body),
    }));
  });
}

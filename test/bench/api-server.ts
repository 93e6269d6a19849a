/**
 * The HTTP API as a bench worker serves it: the app built by createApiDeps + createApiApp (as
 * functions/api.ts and `serve` build it), on a local port, with each request's time inside the app
 * recorded: the whole of `app.fetch`, and the part of it spent waiting for the upstream's answer.
 *
 * Beside it, on the same server, a bare Hono app with one trivial route (BARE_PATH, answering
 * `ok`): the baseline of a round trip through this kind of process (HTTP, the adaptor, Hono, the
 * event loop) on this host at this moment. measure-api.ts asks it of a second worker of this kind,
 * between toggles, so the API's own work (a toggle's writes after its answer) never delays it. Its
 * requests are not recorded with the API's.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { Hono } from 'hono';
import { createApiApp } from '../../lib/api/app.ts';
import { createApiDeps } from '../../lib/api/deps.ts';
import { readEnvironment } from '../../lib/env.ts';
import { listen, type RunningServer } from '../../lib/http-server.ts';
import { createLogger } from '../../lib/log.ts';

/** The bare app's one route. */
export const BARE_PATH = '/__bench/bare';

export interface ApiSetup {
  apiUrl: string;
  token: string;
  dynamoEndpoint: string;
  table: string;
  /** SHA-256 hex digest of the bench client's bearer token. */
  clientDigest: string;
  /** A second client's digest, bound to one tenant (`GET /alerts` as an MSSP's analyst reads it). */
  boundDigest?: string;
  boundTenant?: number;
}

export interface ApiTimings {
  /** ms inside `app.fetch`, per request, in arrival order. */
  server: number[];
  /** ms of that spent waiting for the upstream call. */
  upstream: number[];
  statuses: Record<string, number>;
}

export interface ApiServer {
  url: string;
  /** The timings recorded since the last call, then forgets them. */
  take(): ApiTimings;
  close(): Promise<void>;
}

export async function startApiServer(setup: ApiSetup): Promise<ApiServer> {
  const env = readEnvironment({
    EXPOSURE_API_URL: setup.apiUrl,
    EXPOSURE_API_TOKEN: setup.token,
    TABLE_NAME: setup.table,
    DYNAMODB_ENDPOINT: setup.dynamoEndpoint,
  });
  // Every request is logged as in production; the lines are formatted, then dropped.
  const logger = createLogger({ level: 'info', name: 'api', write: () => {} });
  const apiClients = {
    bench: setup.clientDigest,
    ...(setup.boundDigest && setup.boundTenant
      ? { analyst: { digest: setup.boundDigest, role: 'viewer', tenants: [setup.boundTenant] } }
      : {}),
  };
  const deps = await createApiDeps(env, { apiClients }, { logger });
  const waits = new AsyncLocalStorage<{ upstream: number }>();
  const upstream = deps.upstream;
  const app = createApiApp({
    ...deps,
    upstream: {
      toggleAsset: async (...args: Parameters<typeof upstream.toggleAsset>) => {
        const t0 = performance.now();
        try {
          return await upstream.toggleAsset(...args);
        } finally {
          const store = waits.getStore();
          if (store) store.upstream += performance.now() - t0;
        }
      },
    },
  });
  let timings: ApiTimings = { server: [], upstream: [], statuses: {} };
  const bare = new Hono().get(BARE_PATH, (c) => c.text('ok'));
  const server: RunningServer = await listen(async (request) => {
    if (request.url.endsWith(BARE_PATH)) return bare.fetch(request);
    const store = { upstream: 0 };
    const t0 = performance.now();
    const response = await waits.run(store, () => app.fetch(request));
    timings.server.push(performance.now() - t0);
    timings.upstream.push(store.upstream);
    timings.statuses[response.status] = (timings.statuses[response.status] ?? 0) + 1;
    return response;
  });
  return {
    url: server.url,
    take: () => {
      const taken = timings;
      timings = { server: [], upstream: [], statuses: {} };
      return taken;
    },
    close: async () => {
      await server.close();
      deps.close();
    },
  };
}

/**
 * What a process checks of its upstream settings at start, without loading the client: its URL,
 * and that it has credentials (a static token, or an API key to exchange). The API checks these at
 * cold start and loads the client itself with the first request that calls the upstream
 * (api/upstream-clients.ts); index.ts and http.ts apply the same checks when they build one.
 */
import type { Environment } from '../env.ts';
import { ConfigError } from '../errors.ts';
import { redactor } from '../log.ts';
import type { SecretObject } from '../secrets.ts';

/** The run's upstream credentials, each registered with the log redactor; a ConfigError without either. */
export function upstreamCredentials(
  env: Pick<Environment, 'apiToken' | 'apiKey'>,
  secrets: SecretObject = {},
): { token: string } | { key: string } {
  const token = env.apiToken ?? (typeof secrets.apiToken === 'string' ? secrets.apiToken : undefined);
  const key = env.apiKey ?? (typeof secrets.apiKey === 'string' ? secrets.apiKey : undefined);
  redactor.add(token);
  redactor.add(key);
  if (token) return { token };
  if (key) return { key };
  throw new ConfigError(
    'no upstream credentials: set EXPOSURE_API_TOKEN or EXPOSURE_API_KEY, or put apiToken or apiKey in the secret object',
  );
}

/** Throws a TypeError naming EXPOSURE_API_URL unless `baseUrl` is an http(s) URL. */
export function checkBaseUrl(baseUrl: string): void {
  if (!/^https?:\/\//.test(baseUrl)) {
    throw new TypeError(`EXPOSURE_API_URL must be an http(s) URL, got ${JSON.stringify(baseUrl)}`);
  }
}

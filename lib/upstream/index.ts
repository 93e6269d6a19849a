/**
 * Builds the upstream client from the environment and the secret object: a static token
 * (`EXPOSURE_API_TOKEN` or secret `apiToken`) or an API key exchanged for tokens
 * (`EXPOSURE_API_KEY` or secret `apiKey`, with `EXPOSURE_TENANT_ID`).
 */
import type { Environment } from '../env.ts';
import type { Logger } from '../log.ts';
import type { SecretObject } from '../secrets.ts';
import { apiKeyExchange, staticToken, type TokenProvider } from './auth.ts';
import { UpstreamClient, type UpstreamClientOptions } from './client.ts';
import type { RateGovernor } from './rate.ts';
import { upstreamCredentials } from './settings.ts';

export * from './client.ts';
export { UpstreamError } from './errors.ts';

export function tokenProviderFor(
  env: Pick<Environment, 'apiToken' | 'apiKey' | 'tenantId' | 'apiUrl'>,
  secrets: SecretObject = {},
  fetchImpl?: typeof fetch,
  governor?: RateGovernor,
): TokenProvider {
  const credentials = upstreamCredentials(env, secrets);
  if ('token' in credentials) return staticToken(credentials.token);
  return apiKeyExchange({
    baseUrl: env.apiUrl,
    apiKey: credentials.key,
    tenantId: env.tenantId,
    fetch: fetchImpl,
    governor,
  });
}

/**
 * The credentials of one `tenants` entry (docs/configuration.md): with an API key, an exchange
 * of its own for that tenant (`{"tenant_id": id}`), cached and renewed on its own; with a static
 * token, that token, which acts for its own tenant only (`checkTenants` refuses a config naming
 * others before any poll).
 */
export function tenantTokenProvider(
  env: Pick<Environment, 'apiToken' | 'apiKey' | 'tenantId' | 'apiUrl'>,
  secrets: SecretObject,
  tenantId: number,
  fetchImpl?: typeof fetch,
  governor?: RateGovernor,
): TokenProvider {
  return tokenProviderFor({ ...env, tenantId }, secrets, fetchImpl, governor);
}

/** Whether the run's credentials are a static token (not an API key to exchange). */
export function usesStaticToken(env: Pick<Environment, 'apiToken'>, secrets: SecretObject = {}): boolean {
  return Boolean(env.apiToken ?? (typeof secrets.apiToken === 'string' ? secrets.apiToken : undefined));
}

export function createUpstreamClient(
  env: Environment,
  secrets: SecretObject,
  options: Partial<UpstreamClientOptions> & { logger?: Logger } = {},
): UpstreamClient {
  return new UpstreamClient({
    baseUrl: env.apiUrl,
    coreSegment: env.coreSegment,
    auth: options.auth ?? tokenProviderFor(env, secrets, options.fetch, options.governor),
    ...options,
  });
}

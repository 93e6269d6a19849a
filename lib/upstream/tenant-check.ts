/**
 * Whether a config's `tenants` fit its credentials (tenants.ts `checkTenants`, which loads this for
 * a config with tenants, once a run): a static token acts for its own tenant only, so a config
 * naming any other is refused before anything is polled; and so is a config whose top-level
 * sources poll a tenant that is also one of `tenants` (an API key's own tenant, say, listed again
 * by name): every item of it would be found twice, under two keys, and alerted twice.
 */
import { ConfigError } from '../errors.ts';
import type { AlertsConfig } from '../rules/config.ts';
import type { UpstreamClient } from './client.ts';

/** Whether the top-level sources poll anything (they default to nothing). */
function topLevelPolls(sources: AlertsConfig['sources'] | undefined): boolean {
  return (
    sources?.tenantEvents?.enabled === true ||
    (sources?.identifierGroups.length ?? 0) > 0 ||
    (sources?.credentials?.domains.length ?? 0) > 0
  );
}

/** Throws a ConfigError when the credentials cannot act for every configured tenant. */
export async function checkTenants(
  upstream: UpstreamClient,
  config: Pick<AlertsConfig, 'tenants'> & { sources?: AlertsConfig['sources'] },
  options: { staticToken: boolean; tenantId?: number },
): Promise<void> {
  const tenants = config.tenants ?? [];
  const topLevel = topLevelPolls(config.sources);
  if (!tenants.length || (!options.staticToken && !topLevel)) return;
  // Whose the top level's credentials are: the upstream's word, whichever way they were given.
  const own = (await upstream.tokenTest()).tenant_id;
  const others = tenants.filter((t) => t.id !== own);
  if (options.staticToken && others.length)
    throw new ConfigError(
      `tenants: a static token (EXPOSURE_API_TOKEN or apiToken) acts for its own tenant (${own}) only, and the config names ${others.map((t) => `${t.id} (${t.name})`).join(', ')}: use an API key (EXPOSURE_API_KEY or apiKey), which is exchanged once per tenant`,
    );
  const twin = tenants.findIndex((t) => t.id === own);
  if (topLevel && twin >= 0) {
    const whose = options.staticToken
      ? 'the static token acts for'
      : options.tenantId !== undefined
        ? 'EXPOSURE_TENANT_ID names'
        : 'the API key acts for by default';
    throw new ConfigError(
      `tenants[${twin}] (${tenants[twin]?.name}, ${own}) is also the tenant the top-level sources poll (the tenant ${whose}): each of its items would alert twice; remove the top-level "sources", or that tenants entry`,
    );
  }
}

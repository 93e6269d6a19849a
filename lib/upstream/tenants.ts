/**
 * The upstream clients of a config's `tenants` (docs/configuration.md): one per tenant, each with
 * credentials of its own (an API key's exchange for that tenant, cached and renewed on its own),
 * sharing everything else with the top level's client (the governor's turns, the quota readings).
 * A static token acts for its own tenant only: `checkTenants` asks the upstream whose it is, once
 * a run, and refuses a config that names any other tenant before anything is polled. It refuses
 * too a config whose top-level sources poll a tenant that is also one of `tenants` (an API key's
 * own tenant, say, listed again by name): every item of it would be found twice, under two keys,
 * and alerted twice.
 */
import { ConfigError } from '../errors.ts';
import type { TenantRef } from '../model.ts';
import type { AlertsConfig } from '../rules/config.ts';
import type { TokenProvider } from './auth.ts';
import type { UpstreamClient } from './client.ts';

export interface TenantClients {
  /** The client of a `tenants` entry, or the top level's for none. */
  upstreamFor(tenant?: TenantRef): UpstreamClient;
  /** Throws a ConfigError when the credentials cannot act for every configured tenant. */
  checkTenants(): Promise<void>;
}

/** Whether the top-level sources poll anything (they default to nothing). */
function topLevelPolls(sources: AlertsConfig['sources'] | undefined): boolean {
  return (
    sources?.tenantEvents?.enabled === true ||
    (sources?.identifierGroups.length ?? 0) > 0 ||
    (sources?.credentials?.domains.length ?? 0) > 0
  );
}

export function tenantClients(
  upstream: UpstreamClient,
  config: Pick<AlertsConfig, 'tenants'> & { sources?: AlertsConfig['sources'] },
  options: {
    auth: (tenantId: number) => TokenProvider;
    staticToken: boolean;
    /** EXPOSURE_TENANT_ID: the tenant an API key is exchanged for at the top level. */
    tenantId?: number;
  },
): TenantClients {
  const clients = new Map<number, UpstreamClient>();
  let checked: Promise<void> | undefined;
  return {
    upstreamFor(tenant) {
      if (!tenant) return upstream;
      let client = clients.get(tenant.id);
      if (!client) {
        client = upstream.withAuth(options.auth(tenant.id));
        clients.set(tenant.id, client);
      }
      return client;
    },
    checkTenants() {
      checked ??= (async () => {
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
      })().catch((error: unknown) => {
        checked = undefined;
        throw error;
      });
      return checked;
    },
  };
}

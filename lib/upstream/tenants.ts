/**
 * The upstream clients of a config's `tenants` (docs/configuration.md): one per tenant, each with
 * credentials of its own (an API key's exchange for that tenant, cached and renewed on its own),
 * sharing everything else with the top level's client (the governor's turns, the quota readings).
 * `checkTenants` asks, once a run, whether the tenants fit the credentials (tenant-check.ts, loaded
 * only for a config with tenants).
 */
import { lazily } from '../lazy.ts';
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

/** The check of the tenants against the credentials (tenant-check.ts), loaded by a config with tenants. */
const tenantCheck = lazily(
  'the check of tenants (upstream/tenant-check.ts)',
  () => import('./tenant-check.ts'),
);

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
      if (!config.tenants?.length) return Promise.resolve();
      checked ??= tenantCheck()
        .then(({ checkTenants }) => checkTenants(upstream, config, options))
        .catch((error: unknown) => {
          checked = undefined;
          throw error;
        });
      return checked;
    },
  };
}

/**
 * The upstream clients of a config's `tenants` (interface.md section 10): one per tenant, each with
 * credentials of its own (an API key's exchange for that tenant, cached and renewed on its own),
 * sharing everything else with the top level's client (the governor's turns, the quota readings).
 * A static token acts for its own tenant only: `checkTenants` asks the upstream whose it is, once
 * a run, and refuses a config that names any other tenant before anything is polled.
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

export function tenantClients(
  upstream: UpstreamClient,
  config: Pick<AlertsConfig, 'tenants'>,
  options: { auth: (tenantId: number) => TokenProvider; staticToken: boolean },
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
        if (!config.tenants?.length || !options.staticToken) return;
        const own = (await upstream.tokenTest()).tenant_id;
        const others = config.tenants.filter((t) => t.id !== own);
        if (others.length)
          throw new ConfigError(
            `tenants: a static token (EXPOSURE_API_TOKEN or apiToken) acts for its own tenant (${own}) only, and the config names ${others.map((t) => `${t.id} (${t.name})`).join(', ')}: use an API key (EXPOSURE_API_KEY or apiKey), which is exchanged once per tenant`,
          );
      })().catch((error: unknown) => {
        checked = undefined;
        throw error;
      });
      return checked;
    },
  };
}

/**
 * What a tenant's refused credentials do (refusals.ts loads this with the first refusal): the
 * `TenantRefused` metric, and the first time for the deployment an error line and a notice to each
 * ops destination; after that, a warning.
 */
import { notifyOps } from '../deliver/notify.ts';
import type { DeliverDeps } from '../deliver/types.ts';
import type { Logger } from '../log.ts';
import type { Metrics } from '../metrics.ts';
import type { TenantStateStore } from '../state/tenants.ts';
import type { TenantRef } from './ids.ts';

export interface RefusalDeps {
  store: TenantStateStore;
  deliver: DeliverDeps;
  logger: Logger;
  metrics: Metrics;
  now: () => number;
}

const nameOf = (tenant: TenantRef | undefined) =>
  tenant ? `tenant ${tenant.id} (${tenant.name})` : "the top-level sources' tenant";

export async function reportRefusal(
  deps: RefusalDeps,
  tenant: TenantRef | undefined,
  message: string,
): Promise<void> {
  const fields = { tenant: tenant?.id ?? 'top', error: message };
  deps.metrics.count('TenantRefused', 1, { tenant: String(tenant?.id ?? 'top') });
  const first = await deps.store.markRefused(tenant?.id, new Date(deps.now()), message);
  if (!first) {
    deps.logger.warn('the upstream still refuses this tenant’s credentials; its streams are skipped', fields);
    return;
  }
  deps.logger.error(
    'the upstream refuses this tenant’s credentials; its streams are skipped until it accepts them, the other tenants go on',
    { ...fields, hint: 'give the API key access to the tenant, or remove it from tenants' },
  );
  await notifyOps(
    deps.deliver,
    {
      kind: 'ops',
      title: `the upstream refuses ${nameOf(tenant)}`,
      text: `The upstream refused the credentials of ${nameOf(tenant)} (${message}). Its streams are skipped until it accepts them again; the other tenants are polled as usual. Give the API key access to this tenant, or remove the tenant from the config.`,
    },
    deps.logger,
  );
}

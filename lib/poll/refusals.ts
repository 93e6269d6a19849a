/**
 * A tenant whose credentials the upstream refuses (docs/configuration.md): reported once for the
 * deployment (an error line, the `TenantRefused` metric, a notice to each ops destination), then a
 * warning each cycle that meets it again, until one of its streams is polled to its end. The
 * cycle skips the tenant's other streams meanwhile (cycle.ts); the other tenants go on.
 */
import type { DeliverDeps } from '../deliver/types.ts';
import { lazily } from '../lazy.ts';
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

/** Loaded with the first refusal: most runs never meet one. */
const notify = lazily(
  'the notices to ops destinations (deliver/notify.ts)',
  () => import('../deliver/notify.ts'),
);

const nameOf = (tenant: TenantRef | undefined) =>
  tenant ? `tenant ${tenant.id} (${tenant.name})` : "the top-level sources' tenant";

export function tenantRefusals(deps: RefusalDeps) {
  // Tenants this process saw accepted since it last saw them refused: their state needs no write.
  // (A refusal another run noted meanwhile is cleared by that run's next acceptance, or this
  // process's next start.) So an accepted tenant costs one write a process, not one a stream.
  const accepted = new Set<number | undefined>();
  return {
    async onRefused(tenant: TenantRef | undefined, message: string): Promise<void> {
      accepted.delete(tenant?.id);
      const fields = { tenant: tenant?.id ?? 'top', error: message };
      deps.metrics.count('TenantRefused', 1, { tenant: String(tenant?.id ?? 'top') });
      const first = await deps.store.markRefused(tenant?.id, new Date(deps.now()), message);
      if (!first) {
        deps.logger.warn(
          'the upstream still refuses this tenant’s credentials; its streams are skipped',
          fields,
        );
        return;
      }
      deps.logger.error(
        'the upstream refuses this tenant’s credentials; its streams are skipped until it accepts them, the other tenants go on',
        { ...fields, hint: 'give the API key access to the tenant, or remove it from tenants' },
      );
      await (await notify()).notifyOps(
        deps.deliver,
        {
          kind: 'ops',
          title: `the upstream refuses ${nameOf(tenant)}`,
          text: `The upstream refused the credentials of ${nameOf(tenant)} (${message}). Its streams are skipped until it accepts them again; the other tenants are polled as usual. Give the API key access to this tenant, or remove the tenant from the config.`,
        },
        deps.logger,
      );
    },
    async onAccepted(tenant: TenantRef | undefined): Promise<void> {
      if (accepted.has(tenant?.id)) return;
      accepted.add(tenant?.id);
      if (await deps.store.clearRefused(tenant?.id))
        deps.logger.info('the upstream accepts this tenant’s credentials again', {
          tenant: tenant?.id ?? 'top',
        });
    },
  };
}

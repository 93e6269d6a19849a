/**
 * A tenant whose credentials the upstream refuses (docs/configuration.md): reported once for the
 * deployment (an error line, the `TenantRefused` metric, a notice to each ops destination), then a
 * warning each cycle that meets it again, until one of its streams is polled to its end. The
 * cycle skips the tenant's other streams meanwhile (cycle.ts); the other tenants go on.
 */
import { lazily } from '../lazy.ts';
import type { TenantRef } from './ids.ts';
import type { RefusalDeps } from './refused.ts';

export type { RefusalDeps } from './refused.ts';

/** What a refusal does (refused.ts), loaded with the first: most runs never meet one. */
const refused = lazily('the report of a refused tenant (poll/refused.ts)', () => import('./refused.ts'));

export function tenantRefusals(deps: RefusalDeps) {
  // Tenants this process saw accepted since it last saw them refused: their state needs no write.
  // (A refusal another run noted meanwhile is cleared by that run's next acceptance, or this
  // process's next start.) So an accepted tenant costs one write a process, not one a stream.
  const accepted = new Set<number | undefined>();
  return {
    async onRefused(tenant: TenantRef | undefined, message: string): Promise<void> {
      accepted.delete(tenant?.id);
      await (await refused()).reportRefusal(deps, tenant, message);
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

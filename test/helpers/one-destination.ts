/**
 * What the tests of one destination kind share (test/deliver/{jira,servicenow,splunk,sentinel}):
 * a config that sends the tenant's events, or acme.test's leaked logins, to that one destination;
 * a run that dies once between a send and its record; and the check that no password got through.
 */
import { expect } from 'vitest';
import type { EmulatedCredential } from '../../lib/emulator/dataset.ts';
import type { World } from './world.ts';

/** The config: `destination` under `name`, every item routed to it. */
export function oneDestination(
  name: string,
  destination: Record<string, unknown>,
  options: { credentials?: boolean; passwords?: string; threshold?: number } = {},
): Record<string, unknown> {
  return {
    sources: options.credentials
      ? { tenantEvents: { enabled: false }, credentials: { domains: ['acme.test'], lookback: 'P60D' } }
      : { tenantEvents: { lookback: 'P30D' } },
    destinations: { [name]: destination },
    routes: [{ name: 'all', to: [name] }],
    digest: { threshold: options.threshold ?? 500, maxItems: 20 },
    ...(options.passwords ? { passwords: options.passwords } : {}),
  };
}

/** Runs `run` with the world dying once, right after the destination accepted a send. */
export async function crashingOnce(
  world: Pick<World, 'runtime'>,
  run: () => Promise<unknown>,
): Promise<void> {
  let crashed = false;
  world.runtime.deliver.checkpoint = () => {
    if (!crashed) {
      crashed = true;
      throw new Error('died between the send and its record');
    }
  };
  await run().catch(() => undefined);
  world.runtime.deliver.checkpoint = undefined;
  expect(crashed).toBe(true);
}

/** Neither a credential's password nor its stored secret (when it is one) appears in `text`. */
export function expectNoPassword(text: string, credentials: readonly EmulatedCredential[]): void {
  expect(credentials.length).toBeGreaterThan(0);
  for (const c of credentials) {
    expect(text).not.toContain(c.password);
    if (c.hash.length > 3) expect(text).not.toContain(`"${c.hash}"`);
  }
}

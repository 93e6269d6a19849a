/**
 * The API's upstream clients, loaded with the first request that calls the upstream (an asset
 * toggle, a lookup, an event action): most requests read the table alone, so the API's start does
 * not carry the client (lib/upstream) or the rate governor its clients share. What the start must
 * refuse (no credentials, a bad URL: upstream/settings.ts) deps.ts checks before.
 *
 * @example
 * const clients = upstreamClients({ env, secrets, dynamo, real, clock, logger, budgets });
 * await clients.upstream.toggleAsset(10011, true);
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Clock } from '../clock.ts';
import type { Environment } from '../env.ts';
import type { Logger } from '../log.ts';
import type { SecretObject } from '../secrets.ts';
import { DynamoRateGovernor } from '../state/governor.ts';
import type { UpstreamClient, UpstreamClientOptions } from '../upstream/client.ts';
import { createUpstreamClient, tenantTokenProvider } from '../upstream/index.ts';

/** An upstream call's attempts: how long each may take, and how many. */
export interface AttemptBudget {
  attemptMs: number;
  maxAttempts: number;
}

export interface UpstreamClients {
  /** Toggles and lookups, with the API's short budget. */
  upstream: UpstreamClient;
  /** Event actions: an action from Slack runs after Slack's answer, and may wait longer. */
  acting: UpstreamClient;
  /** A `tenants` entry's clients, with its own token, each made when first asked for. */
  lookingFor(tenant: number): UpstreamClient;
  actingFor(tenant: number): UpstreamClient;
}

export function upstreamClients(parts: {
  env: Environment;
  secrets: SecretObject;
  dynamo: DynamoDBClient;
  /** The machine's clock corrected to DynamoDB's, which the governor counts in. */
  real: Clock;
  clock: Clock;
  logger: Logger;
  budgets: { toggle: AttemptBudget; acting: AttemptBudget };
  /** Overrides of the clients' options (tests shorten timeouts and backoff). */
  overrides?: Partial<UpstreamClientOptions>;
}): UpstreamClients {
  const { env, secrets, logger, clock, budgets } = parts;
  // The API takes its turns from the shared governor (one booking at a time per run keeps its wait
  // short), at the rates the pollers stored: it has no config of its own.
  const governor = new DynamoRateGovernor(parts.dynamo, env.tableName, parts.real);
  const client = (budget: AttemptBudget) =>
    createUpstreamClient(env, secrets, {
      logger,
      clock,
      timeoutMs: budget.attemptMs,
      maxAttempts: budget.maxAttempts,
      governor,
      ...parts.overrides,
    });
  const perTenant = (base: UpstreamClient) => {
    const made = new Map<number, UpstreamClient>();
    return (id: number) => {
      let tenant = made.get(id);
      if (!tenant) {
        tenant = base.withAuth(tenantTokenProvider(env, secrets, id, undefined, governor));
        made.set(id, tenant);
      }
      return tenant;
    };
  };
  const upstream = client(budgets.toggle);
  const acting = client(budgets.acting);
  return { upstream, acting, lookingFor: perTenant(upstream), actingFor: perTenant(acting) };
}

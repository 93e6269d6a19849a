/**
 * The identity providers' share of the deployment's rate (section 12, "One rate for the
 * deployment"; docs/identity.md). Every provider request of every run (lookups and actions; the
 * workers, `serve`, the CLI) takes its turn from the shared governor (lib/state/governor.ts), as
 * the upstream's requests do, in a lane of its own: an item of the governor's per (tenant,
 * provider), paced at the provider's `requestsPerSecond` (default 5: Graph's directory, Okta's
 * users), and for Entra's Identity Protection one at 1 a second per directory (Microsoft's limit
 * is per directory across all apps, so it is keyed by the directory whichever scope names it).
 *
 * A 429, or Okta's `X-Rate-Limit-Remaining: 0`, pauses the lane for every run until the time the
 * provider named, or RATE_PAUSE_MS when it named none (client.ts `send` does both; the interfaces are there, the clients' side). A turn that
 * cannot come before the caller's deadline is refused with when one may: nothing is sent then.
 */
import type { Clock } from '../clock.ts';
import { DynamoRateGovernor } from '../state/governor.ts';
import type { DynamoDBClient } from '../state/sdk.ts';
import { UpstreamError } from '../upstream/errors.ts';
import { type Lane, type ProviderLanes, RATE_PAUSE_MS } from './client.ts';
import type { ProviderConfig } from './schema.ts';
import type { Scope } from './store.ts';

/** Identity Protection's rate: 1 request a second per directory (identity-facts.md). */
export const PROTECTION_RATE = 1;

/** The lanes of a run, one governor per lane (each its own item), made when first asked for. */
export class IdentityLanes {
  private readonly lanes = new Map<string, Lane>();

  /** `clock` is real time (the lanes are shared with other processes); `onRequest` counts DynamoDB requests. */
  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
    private readonly clock: Clock,
    private readonly onRequest?: (operation: string) => void,
  ) {}

  /** The lanes of provider `name` of `scope`. */
  of(scope: Scope, name: string, config: ProviderConfig): ProviderLanes {
    const directory = this.lane(`idp#${scope}#${name}`, config.requestsPerSecond);
    return config.type === 'entra'
      ? {
          directory,
          protection: this.lane(`idp#entra#${config.tenantId.toLowerCase()}#protection`, PROTECTION_RATE),
        }
      : { directory };
  }

  private lane(key: string, rate: number): Lane {
    const found = this.lanes.get(key);
    if (found) return found;
    const governor = new DynamoRateGovernor(this.client, this.tableName, this.clock, {
      key,
      // The lane's one tier has the whole rate: the upstream's split into two does not apply.
      rates: { requestsPerSecond: rate, searchRequestsPerSecond: rate },
      searching: false,
      ...(this.onRequest ? { onRequest: this.onRequest } : {}),
    });
    const lane: Lane = {
      take: async (options) => {
        try {
          await governor.take('basic', options);
          return undefined;
        } catch (error) {
          if (error instanceof UpstreamError && error.noTurn)
            return this.clock.now() + (error.retryAfterMs || RATE_PAUSE_MS);
          // Stopped while waiting (the caller's signal), or the table out of reach: no turn, and
          // nothing sent (an action may be made later; it must not be taken for one in doubt).
          return this.clock.now() + RATE_PAUSE_MS;
        }
      },
      // A pause not written only means another run may hear of the limit from the provider itself.
      pause: (until) => governor.pause(until - this.clock.now()).catch(() => {}),
    };
    this.lanes.set(key, lane);
    return lane;
  }
}

/**
 * The identity providers' share of the deployment's rate (section 12, "One rate for the
 * deployment"; docs/identity.md). Every provider request of every run that builds its identity
 * with the table (index.ts `identityRun`: the workers, `start`, the CLI's commands) takes its turn
 * from the shared governor (lib/state/governor.ts), as the upstream's requests do, in a lane of its
 * own: an item of the governor's per (tenant, provider), paced at the provider's
 * `requestsPerSecond` (default 5: Graph's directory, Okta's users), and for Entra's Identity
 * Protection one at 1 a second per directory (Microsoft's limit is per directory across all apps,
 * so it is keyed by the directory whichever scope names it). A run books one turn of a lane at a
 * time, however many of its lookups are in flight.
 *
 * A 429, or Okta's `X-Rate-Limit-Remaining: 0`, pauses the lane for every run until the time the
 * provider named, or RATE_PAUSE_MS when it named none (client.ts `send`, the clients' side, does
 * both). A turn that cannot come before the caller's deadline is refused with when one may:
 * nothing is sent then.
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
    // One booking at a time per run and lane, as the governor's turns assume: lookups in flight at
    // once would otherwise race one another for each slot, a write lost (and a read) every time.
    // A caller waits for the run's previous booking only until its own deadline.
    let queue: Promise<void> = Promise.resolve();
    const noTurn = (error?: unknown) =>
      error instanceof UpstreamError && error.noTurn
        ? this.clock.now() + (error.retryAfterMs || RATE_PAUSE_MS)
        : // Stopped (the caller's signal, its deadline in the queue) or the table out of reach: no
          // turn, nothing sent (an action may be made later; it must not be taken for one in doubt).
          this.clock.now() + RATE_PAUSE_MS;
    const lane: Lane = {
      take: async (options) => {
        const previous = queue;
        let release = () => {};
        queue = new Promise<void>((resolve) => {
          release = resolve;
        });
        try {
          if (!(await settledBy(previous, options, this.clock.now()))) return noTurn();
          await governor.take('basic', options);
          return undefined;
        } catch (error) {
          return noTurn(error);
        } finally {
          release();
        }
      },
      // A pause not written only means another run may hear of the limit from the provider itself.
      pause: (until) => governor.pause(until - this.clock.now()).catch(() => {}),
    };
    this.lanes.set(key, lane);
    return lane;
  }
}

/** Whether `previous` settles before the caller's deadline or signal ends its wait. */
async function settledBy(
  previous: Promise<void>,
  options: { deadline?: number; signal?: AbortSignal },
  now: number,
): Promise<boolean> {
  if (options.signal?.aborted) return false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stop = () => {};
  const ended = new Promise<boolean>((resolve) => {
    stop = () => resolve(false);
    if (options.deadline !== undefined) timer = setTimeout(stop, Math.max(0, options.deadline - now));
    options.signal?.addEventListener('abort', stop, { once: true });
  });
  try {
    return await Promise.race([previous.then(() => true), ended]);
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', stop);
  }
}

/**
 * `status` and `GET /status` (docs/cli.md): what an operator checks first, read from the
 * table alone (the API has no config: the streams and destinations come from the catalog the
 * pollers write, catalog.ts).
 *
 * What a read costs, bounded by the config's size and never a Scan: the catalog with the quota
 * reading (one BatchGetItem) and the active silences (one Query), at once; then, at once, every
 * stream's and destination's state (one BatchGetItem per 100 of them) and per destination two
 * COUNT Queries on the index (pending, dead), each one page only: a count that stops at a page
 * says so (`pendingMore`, `deadMore`) rather than read a huge backlog. With S streams and D
 * destinations: 2 + ceil((S + D) / 100) + 2D requests, 2 on an empty table (counted in
 * test/state/status.int.test.ts).
 *
 * `lagSeconds` is the value the `PollLagSeconds` metric had at the stream's last poll that saw
 * items (poll/stream.ts stores both from one computation): how old the newest item it handled was.
 *
 * With identity providers in the catalog (docs/identity.md), one more Query reads their
 * state (identity/store.ts, partition `idp`: the last lookup, a refusal and since when), beside
 * the stream and destination states; without any, nothing more is read and `identityProviders`
 * is left out.
 */

import type { ProviderState } from '../identity/store.ts';
import { tenantOfStream } from '../poll/ids.ts';
import { type Holding, isActive, type SilenceSource } from '../rules/silences.ts';
import { CATALOG_KEY, type Catalog, CatalogStore } from './catalog.ts';
import { destinationKey } from './destinations.ts';
import { batchGet, type TableIo } from './io.ts';
import { marshall, unmarshall } from './marshall.ts';
import { QUOTA_KEY, QuotaStore } from './quota.ts';
import { queueKey } from './records/record.ts';
import { QueryCommand } from './sdk.ts';
import { streamKey } from './streams.ts';

/** Items a count reads at most (one page); a page also stops at 1 MB of them. */
export const COUNT_PAGE = 1_000;

export interface StreamStatusLine {
  stream: string;
  /** The `tenants` entry it polls for; null for the top-level sources. */
  tenant: { id: number; name: string } | null;
  lastPolledAt: string | null;
  lagSeconds: number | null;
  lastResult: string | null;
}

export interface DestinationStatusLine {
  destination: string;
  pending: number;
  /** There are more pending than `pending`: the count stopped at one page. */
  pendingMore?: true;
  dead: number;
  deadMore?: true;
  /** It refused for good (a 4xx) and has not accepted a message since. */
  refusing: boolean;
}

export interface IdentityProviderStatusLine {
  /** The `tenants` entry whose config names it; null for the top level's. */
  tenant: { id: number; name: string } | null;
  /** Its name in the config. */
  provider: string;
  /** `entra` or `okta`. */
  type: string;
  /** When a cycle last looked logins up in it; null: never. */
  lastLookupAt: string | null;
  /** It refuses our credentials: its logins are `unknown` until it accepts them again. */
  refusing: boolean;
  refusedAt?: string;
  /** What it answered (its status and error code; never a secret). */
  refusedMessage?: string;
}

export interface Status {
  streams: StreamStatusLine[];
  destinations: DestinationStatusLine[];
  /** Silences active now: run-time ones and the config's. */
  silences: number;
  quota: { remaining: number; at: string } | null;
  /** Only with identity providers in the config. */
  identityProviders?: IdentityProviderStatusLine[];
}

type Stored = Record<string, unknown>;

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

export class StatusReader {
  constructor(
    private readonly io: TableIo,
    private readonly silences: SilenceSource,
  ) {}

  async read(): Promise<Status> {
    const [first, active] = await Promise.all([
      batchGet(this.io, [marshall(CATALOG_KEY), marshall(QUOTA_KEY)]),
      this.silences.active(),
    ]);
    const found = first.map((stored) => unmarshall(stored));
    const catalog = CatalogStore.from(found.find((item) => item.pk === CATALOG_KEY.pk));
    const quota = QuotaStore.from(found.find((item) => item.pk === QUOTA_KEY.pk));
    const streams = catalog?.streams ?? [];
    const destinations = catalog?.destinations ?? [];
    const tenants = new Map((catalog?.tenants ?? []).map((t) => [t.id, t]));
    const partitions = [undefined, ...new Set(streams.flatMap((s) => tenantOfStream(s) ?? []))];
    const keys = [...streams.map((id) => streamKey(id)), ...destinations.map((name) => destinationKey(name))];
    const providers = catalog?.identity ?? [];
    const [items, counts, providerStates] = await Promise.all([
      batchGet(
        this.io,
        keys.map((k) => marshall(k)),
      ),
      Promise.all(
        destinations.map(async (name) => {
          // The top level's queue, and each tenant's (records/queue.ts).
          const [pending, dead] = await Promise.all([
            this.countAll(partitions.map((t) => queueKey('pending', name, t))),
            this.countAll(partitions.map((t) => queueKey('dead', name, t))),
          ]);
          return { pending, dead };
        }),
      ),
      // Loaded only with providers to show: the API's start carries no identity code.
      providers.length
        ? import('../identity/store.ts').then(({ IdentityStore }) => new IdentityStore(this.io).providers())
        : Promise.resolve([]),
    ]);
    const byKey = new Map<string, Stored>();
    for (const stored of items) {
      const item = unmarshall(stored);
      byKey.set(`${item.pk}\u0000${item.sk}`, item);
    }
    const at = (key: { pk: string; sk: string }) => byKey.get(`${key.pk}\u0000${key.sk}`);
    const now = this.io.clock.now();
    const configLive = (catalog?.configSilences ?? []).filter((until) => isActive({ until }, now)).length;
    return {
      streams: streams.map((stream) => {
        const item = at(streamKey(stream));
        const id = tenantOfStream(stream);
        return {
          stream,
          tenant: id === undefined ? null : (tenants.get(id) ?? { id, name: String(id) }),
          lastPolledAt: str(item?.lastPolledAt),
          lagSeconds: typeof item?.lagSeconds === 'number' ? item.lagSeconds : null,
          lastResult: str(item?.lastResult),
        };
      }),
      destinations: destinations.map((destination, i) => {
        const count = counts[i] as { pending: Count; dead: Count };
        return {
          destination,
          pending: count.pending.n,
          ...(count.pending.more ? { pendingMore: true as const } : {}),
          dead: count.dead.n,
          ...(count.dead.more ? { deadMore: true as const } : {}),
          refusing: typeof at(destinationKey(destination))?.refusedCode === 'string',
        };
      }),
      silences: active.filter((s: Holding) => isActive(s, now)).length + configLive,
      quota: quota ?? null,
      ...(providers.length ? { identityProviders: identityLines(providers, providerStates, tenants) } : {}),
    };
  }

  /** Items under several index partitions, summed. */
  private async countAll(partitions: string[]): Promise<Count> {
    const counts = await Promise.all(partitions.map((p) => this.count(p)));
    return { n: counts.reduce((n, c) => n + c.n, 0), more: counts.some((c) => c.more) };
  }

  /** Items under one index partition, one page at most. */
  private async count(partition: string): Promise<Count> {
    this.io.onRequest?.('Query');
    const out = await this.io.client.send(
      new QueryCommand({
        TableName: this.io.tableName,
        IndexName: 'gsi1',
        KeyConditionExpression: 'gsi1pk = :pk',
        ExpressionAttributeValues: marshall({ ':pk': partition }),
        Select: 'COUNT',
        Limit: COUNT_PAGE,
      }),
    );
    return { n: out.Count ?? 0, more: out.LastEvaluatedKey !== undefined };
  }
}

interface Count {
  n: number;
  more: boolean;
}

/** Each provider of the catalog, in its order, with the state the lookups left in the table. */
function identityLines(
  providers: NonNullable<Catalog['identity']>,
  states: ProviderState[],
  tenants: Map<number, { id: number; name: string }>,
): IdentityProviderStatusLine[] {
  return providers.map(({ scope, provider, type }) => {
    const state = states.find((s) => s.scope === scope && s.provider === provider);
    return {
      tenant: scope === 'top' ? null : (tenants.get(scope) ?? { id: scope, name: String(scope) }),
      provider,
      type,
      lastLookupAt: state?.lastLookupAt ?? null,
      refusing: state?.refusedAt !== undefined,
      ...(state?.refusedAt ? { refusedAt: state.refusedAt } : {}),
      ...(state?.refusedMessage ? { refusedMessage: state.refusedMessage } : {}),
    };
  });
}

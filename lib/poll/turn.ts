/**
 * The order streams take their turns in (docs/architecture.md#the-governor: no stream starves): least
 * recently polled first, never polled first of all, the config's order among equals. A cycle
 * visits its streams in this order (cycle.ts) and a dispatcher hands them out in it
 * (functions/dispatch.ts). It needs only the config and each stream's last-polled time, so a
 * dispatcher loads nothing else: no upstream client, no destinations, no renderers.
 */
import type { AlertsConfig } from '../rules/config.ts';
import { takeTurns } from '../turns.ts';
import { credentialStreamId, groupStreamId, scopesOf, tenantStreamId } from './ids.ts';
import type { PollKind } from './streams.ts';

/** One stream to poll: what a dispatcher hands a worker. */
export interface StreamJob {
  kind: PollKind;
  stream: string;
}

/** Where the streams' last-polled times are kept (state/streams.ts StreamStore). */
export interface LastPolled {
  lastPolled(streamIds: readonly string[]): Promise<Map<string, { at?: string }>>;
}

/** The ids of the streams of `kind` in the config, in its order, each once. */
export function streamIds(config: AlertsConfig, kind: PollKind): string[] {
  // The tenants take turns, as in streams.ts: the same order everywhere.
  return takeTurns(
    scopesOf(config).map(({ sources, tenant }) => {
      const t = tenant?.id;
      if (kind === 'events') {
        return [
          ...(sources.tenantEvents?.enabled ? [tenantStreamId(t)] : []),
          ...sources.identifierGroups.map((g) => groupStreamId(g.id, t)),
        ];
      }
      return [...new Set((sources.credentials?.domains ?? []).map((d) => credentialStreamId(d, t)))];
    }),
  );
}

/** `streams` in turn: one BatchGet per 100 streams. Stable: streams polled at the same time keep their order. */
export async function inTurn<T>(
  streams: readonly T[],
  idOf: (s: T) => string,
  store: LastPolled,
): Promise<T[]> {
  const polled = await store.lastPolled(streams.map(idOf));
  const at = (s: T) => polled.get(idOf(s))?.at ?? '';
  return streams
    .map((s, i) => ({ s, i }))
    .sort((a, b) => (at(a.s) < at(b.s) ? -1 : at(a.s) > at(b.s) ? 1 : a.i - b.i))
    .map((e) => e.s);
}

/** The streams of `kind` as jobs, the one that waited longest first. */
export async function dispatchStreams(
  source: { config: AlertsConfig; streams: LastPolled },
  kind: PollKind,
): Promise<StreamJob[]> {
  return (await inTurn(streamIds(source.config, kind), (id) => id, source.streams)).map((stream) => ({
    kind,
    stream,
  }));
}

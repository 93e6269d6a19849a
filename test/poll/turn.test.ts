/**
 * The order of turns (lib/poll/turn.ts): the dispatcher's stream ids are the cycle's, and streams
 * come least recently polled first, never polled first of all, in the config's order among equals.
 */
import { describe, expect, it } from 'vitest';
import { streamsInTurn } from '../../lib/poll/cycle.ts';
import { streamsFor } from '../../lib/poll/streams.ts';
import { inTurn, type LastPolled, streamIds } from '../../lib/poll/turn.ts';
import { parseConfig } from '../../lib/rules/config.ts';
import { staticToken } from '../../lib/upstream/auth.ts';
import { UpstreamClient } from '../../lib/upstream/client.ts';

const upstream = new UpstreamClient({ baseUrl: 'http://127.0.0.1:9', auth: staticToken('unused') });
const configs = {
  everything: {
    sources: {
      tenantEvents: { lookback: 'P1D' },
      identifierGroups: [{ id: 7 }, { id: 101 }],
      credentials: { domains: ['Example.com', 'example.com', 'sub.example.com', 'acme.test'] },
    },
  },
  'groups only': { sources: { tenantEvents: { enabled: false }, identifierGroups: [{ id: 3 }] } },
  'credentials only': { sources: { credentials: { domains: ['a.test'] } } },
};

/** Last-polled times kept in memory, as the table would answer them. */
function polledAt(times: Record<string, string>): LastPolled {
  return {
    lastPolled: async (ids) => new Map(ids.filter((id) => id in times).map((id) => [id, { at: times[id] }])),
  };
}

describe('turns', () => {
  it.each(Object.entries(configs))('the dispatcher lists the streams the cycle polls (%s)', (_, input) => {
    const { config } = parseConfig(JSON.stringify({ ...input, destinations: {}, routes: [] }));
    for (const kind of ['events', 'credentials'] as const)
      expect(streamIds(config, kind)).toEqual(streamsFor(config, kind, upstream).map((s) => s.id));
  });

  it('never polled first, then least recently polled, the config order among equals', async () => {
    const ids = ['a', 'b', 'c', 'd', 'e'];
    const store = polledAt({
      a: '2026-11-22T10:00:00Z',
      b: '2026-11-22T09:00:00Z',
      d: '2026-11-22T09:00:00Z',
    });
    expect(await inTurn(ids, (id) => id, store)).toEqual(['c', 'e', 'b', 'd', 'a']);
  });

  it("a worker's cycle reads only its jobs' stream states, not its kind's every one", async () => {
    const domains = Array.from({ length: 400 }, (_, i) => `d${i}.test`);
    const { config } = parseConfig(
      JSON.stringify({ sources: { credentials: { domains } }, destinations: {}, routes: [] }),
    );
    const asked: string[][] = [];
    const store = polledAt({ 'credentials:d7.test': '2026-11-22T10:00:00Z' });
    const poll = {
      streams: {
        lastPolled: (ids: readonly string[]) => {
          asked.push([...ids]);
          return store.lastPolled(ids);
        },
      },
    };
    const deps = { config, upstream, poll } as unknown as Parameters<typeof streamsInTurn>[0];
    const jobs = new Set(['credentials:d7.test', 'credentials:d300.test']);
    const turn = await streamsInTurn(deps, 'credentials', jobs);
    expect(turn.map((s) => s.id)).toEqual(['credentials:d300.test', 'credentials:d7.test']);
    expect(asked).toEqual([['credentials:d7.test', 'credentials:d300.test']]);
    // A cycle over the whole kind (the CLI's poll) still reads and orders them all.
    asked.length = 0;
    expect(await streamsInTurn(deps, 'credentials')).toHaveLength(400);
    expect(asked[0]).toHaveLength(400);
  });
});

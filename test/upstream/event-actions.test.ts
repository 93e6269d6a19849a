/**
 * Endpoint 12, event actions, in the client and the emulator over real HTTP: the limits checked
 * before anything is sent, longer lists sent 10 at a time, the flags set so the event searches'
 * filters see them, a request refused for one of its uids asked again uid by uid, and faults as
 * on every endpoint.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { UpstreamError } from '../../lib/upstream/errors.ts';
import { useEmulator } from '../helpers/emulator.ts';

const emu = useEmulator({ eventsPerTenant: 30, lateMatchesPerTenant: 0, credentials: 0 });
const control = () => emu.running.emulator.control;
const events = () => emu.running.emulator.dataset.tenant('acme').events;
const actions = () => control().calls('eventActions');

beforeEach(() => {
  control().clearFaults();
  control().clearLog();
  for (const e of events()) {
    e.isIgnored = false;
    e.isRemediated = false;
  }
});

async function visibleUids(filters: Record<string, boolean>): Promise<Set<string>> {
  const seen = new Set<string>();
  for await (const page of emu.client().tenantEventPages({ order: 'asc', size: 10, filters }))
    for (const item of page.items) seen.add(item.metadata.uid);
  return seen;
}

describe('event actions (endpoint 12)', () => {
  it('refuses, before sending, a type it does not know and a request of 0 or 11 uids', async () => {
    const client = emu.client();
    const uids = events().map((e) => e.item.metadata.uid);
    await expect(client.eventAction('delete' as never, [uids[0] as string])).rejects.toThrow(
      /type must be one of/,
    );
    await expect(client.eventAction('ignore', [])).rejects.toThrow(/1 to 10 uids a request, got 0/);
    await expect(client.eventAction('ignore', uids.slice(0, 11))).rejects.toThrow(/got 11/);
    await expect(client.eventActions('ignore', ['ok', ''])).rejects.toThrow(
      /every uid must be a non-empty string/,
    );
    expect(actions()).toHaveLength(0);
  });

  it('ignores 23 events in 3 requests; the search filter is_ignored: false no longer returns them', async () => {
    const uids = events()
      .slice(0, 23)
      .map((e) => e.item.metadata.uid);
    const batches = await emu.client().eventActions('ignore', [...uids, uids[0] as string]);
    expect(batches.map((b) => [b.uids.length, b.ok])).toEqual([
      [10, true],
      [10, true],
      [3, true],
    ]);
    expect(actions()).toHaveLength(3);
    const visible = await visibleUids({ is_ignored: false });
    expect(uids.filter((u) => visible.has(u))).toEqual([]);
    expect(visible.size).toBe(events().length - 23);
    // And back.
    await emu.client().eventActions('unignore', uids.slice(0, 5));
    expect((await visibleUids({ is_ignored: false })).size).toBe(events().length - 18);
    await emu.client().eventActions('remediate', uids.slice(0, 2));
    expect(events().filter((e) => e.isRemediated)).toHaveLength(2);
  });

  it('an unknown uid refuses its whole request upstream; the client asks each of its uids alone, so each gets its own answer', async () => {
    const uids = events()
      .slice(0, 12)
      .map((e) => e.item.metadata.uid);
    const batches = await emu.client().eventActions('ignore', ['no/such/event', ...uids]);
    const [refused, ...rest] = batches;
    expect(refused?.uids).toEqual(['no/such/event']);
    const error = refused?.ok === false ? refused.error : undefined;
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error?.code).toBe('not_found');
    expect(rest).toEqual([
      ...uids.slice(0, 9).map((uid) => ({ uids: [uid], ok: true })),
      { uids: uids.slice(9), ok: true },
    ]);
    // The refused request of 10, each of its 10 uids alone, then the next request of 3.
    expect(actions()).toHaveLength(12);
    expect(events().filter((e) => e.isIgnored)).toHaveLength(12);
  });

  it('a refusal of our credentials or of the rate is not asked again uid by uid', async () => {
    const uids = events()
      .slice(0, 3)
      .map((e) => e.item.metadata.uid);
    control().addFault({ endpoint: 'eventActions', status: 403 });
    const [batch] = await emu.client().eventActions('ignore', uids);
    expect(batch).toMatchObject({ uids, ok: false });
    expect(actions()).toHaveLength(1);
    expect(events().filter((e) => e.isIgnored)).toHaveLength(0);
  });

  it('a fault on the endpoint (a 400) is an error of that request, and changes nothing', async () => {
    control().addFault({ endpoint: 'eventActions', status: 400 });
    const uid = events()[0]?.item.metadata.uid as string;
    const [batch] = await emu.client().eventActions('remediate', [uid]);
    expect(batch?.ok).toBe(false);
    expect(events()[0]?.isRemediated).toBe(false);
  });
});

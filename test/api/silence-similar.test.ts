/**
 * `Silence similar` never broader than the event, through signed Slack requests against the API
 * app, the emulator over HTTP, dynalite and the Slack Web API stand-in: an event without
 * identifiers gets no select (and an older message's select without them silences nothing); a
 * top-level event in a deployment with tenants gets a silence of the top-level sources alone
 * (`topLevel`), so a tenant's event of that type and identifiers is still sent; the same request
 * again makes no second silence. `silence add toplevel=true` in the CLI, as amtool users type it.
 * And a verified click or command by a Slack user not allowed is in the audit trail, refused.
 */
import { describe, expect, it } from 'vitest';
import { runCli } from '../../lib/cli/run.ts';
import { MSSP_API_KEY } from '../../lib/emulator/dataset.ts';
import { deliveryId } from '../../lib/state/records/record.ts';
import type { EventItem } from '../../lib/upstream/schemas.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { captureIo } from '../helpers/io.ts';
import { ANA, useSlackActions } from '../helpers/slack-actions.ts';

const emu = useEmulator({ eventsPerTenant: 4, lateMatchesPerTenant: 0, credentials: 0 });
const db = useDynalite();
const doors = useSlackActions(emu, db);

const dataset = () => emu.running.emulator.dataset;
/** A click's time as Slack writes it: now, in seconds with microseconds. */
const nowTs = (n: number) => `${Math.floor(Date.now() / 1000)}.${String(n).padStart(6, '0')}`;

/** The API app over a world polled with `config`; each request's work done before it answers here. */
async function setUp(config: Record<string, unknown>, options: { apiKey?: string } = {}) {
  const api = await doors.setUp({ routes: [{ name: 'all', to: ['app'] }], ...config }, options);
  const post = async (path: string, body: string) => {
    const res = await api.post(path, body);
    await api.settled();
    return res;
  };
  const select = (key: string, value: string, actionTs: string, user = ANA) =>
    api.interaction(
      {
        action_id: 'exposure:silence',
        block_id: `exposure:${key}`,
        selected_option: { value },
        action_ts: actionTs,
      },
      { user },
    );
  const said = () => api.answers.requests.map((r) => (r.json() as { text: string }).text);
  return { world: api.world, deps: api.deps, post, select, said, later: api.later };
}

describe('Silence similar', () => {
  it('an event without identifiers gets no select; an older select without them silences nothing', async () => {
    doors.slack.reset();
    const bare = dataset().tenant('acme').events[0]?.item as unknown as EventItem;
    const saved = bare.identifiers;
    bare.identifiers = [];
    try {
      const { deps, post, select, said } = await setUp({ sources: { tenantEvents: { lookback: 'P30D' } } });
      const blocks = (uid: string) =>
        JSON.stringify(
          doors.slack.top().find((m) => JSON.stringify(m.blocks).includes(`"exposure:${uid}"`))?.blocks,
        );
      expect(blocks(bare.metadata.uid)).toContain('"action_id":"exposure:ignore"');
      expect(blocks(bare.metadata.uid)).not.toContain('"action_id":"exposure:silence"');
      // Its neighbour names identifiers: it keeps its select.
      const other = dataset().tenant('acme').events[1]?.item as unknown as EventItem;
      expect(blocks(other.metadata.uid)).toContain('"action_id":"exposure:silence"');
      // A message posted before this rule: its select names no identifiers.
      const res = await post(
        '/slack/interactions',
        select(bare.metadata.uid, `P7D|${bare.metadata.type}|`, nowTs(1)),
      );
      expect(res.status).toBe(200);
      expect(await deps.silences.active()).toEqual([]);
      expect(said().at(-1)).toMatch(/^Not silenced: that event names no identifiers/);
    } finally {
      bare.identifiers = saved;
    }
  });

  it('a top-level event, with tenants: the silence is the top-level sources’ alone; a tenant’s event of that type and identifiers is still sent', async () => {
    const initech = dataset().tenant(1003);
    const { world, deps, post, select } = await setUp(
      {
        sources: { tenantEvents: { lookback: 'P30D' } },
        tenants: [{ id: 1003, name: 'Initech', sources: { tenantEvents: { lookback: 'P30D' } } }],
      },
      { apiKey: MSSP_API_KEY.key },
    );
    const model = initech.events[0]?.item as unknown as EventItem;
    const ids = (model.identifiers ?? []).map((i) => i.id);
    // A top-level event's key is its bare uid.
    const body = select('some/top-level/uid', `PT1H|${model.metadata.type}|${ids.join(',')}`, nowTs(2));
    expect((await post('/slack/interactions', body)).status).toBe(200);
    const [silence] = await deps.silences.active();
    expect(silence?.match).toEqual({
      kind: 'event',
      types: [model.metadata.type],
      identifiers: ids,
      topLevel: true,
    });
    // Initech's new event of that type, for those identifiers: not held back by it.
    const [fresh] = dataset().appendEvents(1003, 1);
    if (!fresh) throw new Error('no event');
    fresh.item.metadata.type = model.metadata.type;
    (fresh.item as unknown as EventItem).identifiers = model.identifiers;
    await world.cycle('events');
    const id = deliveryId('app', 'event', `1003:${fresh.item.metadata.uid}`);
    expect((await world.runtime.deliveries.getMany([id])).get(id)?.status).toBe('sent');
  });

  it('the same request again (same team, user and action_ts), even at once: one silence', async () => {
    const { deps, post, select, said } = await setUp({ sources: { tenantEvents: { lookback: 'P30D' } } });
    const item = dataset().tenant('acme').events[2]?.item as unknown as EventItem;
    const ids = (item.identifiers ?? []).map((i) => i.id).join(',');
    const body = select(item.metadata.uid, `P1D|${item.metadata.type}|${ids}`, nowTs(3));
    const answers = await Promise.all([post('/slack/interactions', body), post('/slack/interactions', body)]);
    expect(answers.map((r) => r.status)).toEqual([200, 200]);
    expect((await post('/slack/interactions', body)).status).toBe(200);
    const active = await deps.silences.active();
    expect(active).toHaveLength(1);
    // Each answer names that one silence.
    expect(said().filter((t) => t.includes(active[0]?.id ?? '-'))).toHaveLength(3);
    // A second click (its own action_ts) is a silence of its own.
    await post(
      '/slack/interactions',
      select(item.metadata.uid, `P1D|${item.metadata.type}|${ids}`, nowTs(4)),
    );
    expect(await deps.silences.active()).toHaveLength(2);
  });

  it('the same request replayed days later, while its silence lives: no second silence', async () => {
    const { deps, post, select, said, later } = await setUp({
      sources: { tenantEvents: { lookback: 'P30D' } },
    });
    const item = dataset().tenant('acme').events[1]?.item as unknown as EventItem;
    const ids = (item.identifiers ?? []).map((i) => i.id).join(',');
    const body = select(item.metadata.uid, `P7D|${item.metadata.type}|${ids}`, nowTs(6));
    expect((await post('/slack/interactions', body)).status).toBe(200);
    const [silence] = await deps.silences.active();
    // Signed afresh two days on, the click's action_ts unchanged.
    later.ms = 2 * 86_400_000;
    expect((await post('/slack/interactions', body)).status).toBe(200);
    expect(await deps.silences.active()).toEqual([silence]);
    expect(said().at(-1)).toContain(silence?.id);
    // Past its 7 days and a day, the first silence has ended: the click makes a new one, named
    // by this moment (an id of the click's time would be outside what the active read looks at).
    later.ms = 8 * 86_400_000 + 60_000;
    expect((await post('/slack/interactions', body)).status).toBe(200);
    const all = await deps.silences.all();
    expect(all).toHaveLength(2);
    expect(all.map((s) => s.id)).toContain(silence?.id);
  });

  it('silence add toplevel=true in the CLI, as amtool users type it', async () => {
    const table = await db.table();
    const cli = async (argv: string[]) => {
      const io = captureIo({ TABLE_NAME: table, DYNAMODB_ENDPOINT: db.endpoint });
      return { code: await runCli(argv, io), out: io.out, err: io.err };
    };
    const added = await cli([
      'silence',
      'add',
      'types=paste',
      'toplevel=true',
      '--duration',
      '2h',
      '--comment',
      'noise',
    ]);
    expect(added.err).toBe('');
    expect(added.code).toBe(0);
    const listed = await cli(['silences', 'list', '--json']);
    expect(JSON.parse(listed.out)[0]?.match).toEqual({ types: ['paste'], topLevel: true });
    expect((await cli(['silences', 'list'])).out).toContain('toplevel=true');
    const bad = await cli(['silence', 'add', 'toplevel=maybe', '--duration', '2h', '--comment', 'x']);
    expect(bad.code).toBe(2);
    expect(bad.err).toContain('toplevel is true or false');
  });
});

describe('a Slack user not allowed', () => {
  it('a verified click or command is refused and audited: who, what, on which event', async () => {
    const { deps, post, select, said } = await setUp({ sources: { tenantEvents: { lookback: 'P30D' } } });
    const item = dataset().tenant('acme').events[3]?.item as unknown as EventItem;
    const click = select(item.metadata.uid, `PT1H|${item.metadata.type}|1`, nowTs(5), 'U0STRANGER');
    expect((await post('/slack/interactions', click)).status).toBe(200);
    expect(said().at(-1)).toMatch(/not allowed/);
    const command = new URLSearchParams({
      team_id: 'T0OTHER',
      user_id: 'U0STRANGER',
      command: '/exposure',
      text: 'lookup example.com',
      trigger_id: '1337.42',
    }).toString();
    expect((await post('/slack/commands', command)).status).toBe(200);
    expect(await deps.silences.active()).toEqual([]);
    const trail = (await deps.act?.actions.auditTrail()) ?? [];
    expect(trail).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          by: 'slack:U0STRANGER',
          type: 'silence',
          uids: [item.metadata.uid],
          refused: expect.stringMatching(/^not allowed/),
        }),
        expect.objectContaining({
          by: 'slack:U0STRANGER',
          type: 'lookup',
          team: 'T0OTHER',
          refused: expect.any(String),
        }),
      ]),
    );
    expect(trail).toHaveLength(2);
  });
});

import { describe, expect, it } from 'vitest';
import { actOnEvents } from '../../lib/actions/events.ts';
import { MSSP_API_KEY } from '../../lib/emulator/dataset.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { ANA, SLACK_TEAM, useSlackActions } from '../helpers/slack-actions.ts';
import { SLACK_CHANNEL } from '../helpers/slack-api.ts';

const emu = useEmulator({ eventsPerTenant: 4, lateMatchesPerTenant: 0, credentials: 50 });
const db = useDynalite();
const doors = useSlackActions(emu, db);

const control = () => emu.running.emulator.control;
const initech = () => emu.running.emulator.dataset.tenant(1003).events;

async function setUp() {
  const hook = await doors.receivers();
  const api = await doors.setUp(
    {
      tenants: [
        { id: 1002, name: 'Globex', sources: { tenantEvents: { lookback: 'P30D' } } },
        { id: 1003, name: 'Initech', sources: { tenantEvents: { lookback: 'P30D' } } },
      ],
      destinations: { globex: { type: 'webhook', url: hook.url } },
      routes: [
        { name: 'initech', match: { tenants: ['Initech'] }, to: ['app'] },
        { name: 'globex', match: { tenants: ['Globex'] }, to: ['globex'] },
      ],
    },
    { apiKey: MSSP_API_KEY.key },
  );
  /** The queries of the lookups Slack's doors handed on. */
  const looked = () => api.handed.flatMap((work) => (work.kind === 'slack-lookup' ? [work.query] : []));
  return { ...api, looked };
}

describe('many tenants: actions and lookups', () => {
  it("an action on a tenant's event runs with that tenant's token and changes that tenant's event", async () => {
    const { deps } = await setUp();
    const event = initech()[0];
    const uid = event?.item.metadata.uid as string;
    control().clearLog();
    if (!deps.act) throw new Error('the API acts on events');
    const outcome = await actOnEvents(deps.act, { type: 'ignore', uids: [`1003:${uid}`], by: 'cli:test' });
    expect(outcome.results).toEqual([{ uid: `1003:${uid}`, ok: true }]);
    expect(
      control()
        .calls('eventActions')
        .map((c) => c.tenantId),
    ).toEqual([1003]);
    expect(event?.isIgnored).toBe(true);
  });

  it('Silence similar on a tenant’s event silences that tenant only', async () => {
    const { deps, post, interaction, settled } = await setUp();
    const item = initech()[1]?.item;
    const ids = (item?.identifiers ?? []).map((i) => i.id).join(',');
    const body = interaction({
      action_id: 'exposure:silence',
      block_id: `exposure:1003:${item?.metadata.uid}`,
      selected_option: { value: `PT1H|${item?.metadata.type}|${ids}` },
      action_ts: '1716999999.000777',
    });
    expect((await post('/slack/interactions', body)).status).toBe(200);
    await settled();
    const [silence] = await deps.silences.active();
    expect(silence?.match).toMatchObject({ kind: 'event', types: [item?.metadata.type], tenants: [1003] });
  });

  it('a lookup runs as the tenant it names, or the Slack channel’s; an unknown one is refused by name', async () => {
    const { deps, post, settled, looked } = await setUp();
    control().clearLog();
    await deps.lookup?.({ domain: 'initech.test', tenant: 'Initech' });
    expect(
      control()
        .calls('identitiesByDomain')
        .map((c) => c.tenantId),
    ).toEqual([1003]);
    await expect(deps.lookup?.({ domain: 'initech.test', tenant: 'Hooli' })).rejects.toThrow(
      /no tenant "Hooli": the tenants are 1002 \(Globex\), 1003 \(Initech\)/,
    );
    control().clearLog();
    const command = new URLSearchParams({
      team_id: SLACK_TEAM,
      user_id: ANA,
      channel_id: SLACK_CHANNEL,
      command: '/exposure',
      text: 'lookup initech.test',
    }).toString();
    expect((await post('/slack/commands', command)).status).toBe(200);
    await settled();
    expect(looked()).toEqual([{ domain: 'initech.test', tenant: '1003' }]);
    expect(
      control()
        .calls('identitiesByDomain')
        .map((c) => c.tenantId),
    ).toEqual([1003]);
  });
});

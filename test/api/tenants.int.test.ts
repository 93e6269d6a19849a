import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actOnEvents } from '../../lib/actions/events.ts';
import { runSlackWork } from '../../lib/actions/slack-work.ts';
import { createApiApp } from '../../lib/api/app.ts';
import { createApiDeps } from '../../lib/api/deps.ts';
import { MSSP_API_KEY } from '../../lib/emulator/dataset.ts';
import { readEnvironment } from '../../lib/env.ts';
import { memoryLogger } from '../../lib/log.ts';
import { skipClock } from '../helpers/clock.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { type Receiver, useReceivers } from '../helpers/receiver.ts';
import { SLACK_CHANNEL, type SlackStandIn, slackSigned, startSlackApi } from '../helpers/slack-api.ts';
import { makeWorld } from '../helpers/world.ts';

const emu = useEmulator({ eventsPerTenant: 4, lateMatchesPerTenant: 0, credentials: 50 });
const db = useDynalite();
const receivers = useReceivers();
let slack: SlackStandIn;
beforeAll(async () => {
  slack = await startSlackApi();
});
afterAll(() => slack.close());

const SECRET = 'slack-signing-secret-for-tests';
const TEAM = 'T0TEAM01';
const ANA = 'U0ANA001';
const control = () => emu.running.emulator.control;
const initech = () => emu.running.emulator.dataset.tenant(1003).events;

async function setUp() {
  const answers: Receiver = await receivers();
  const hook: Receiver = await receivers();
  const slackActions = {
    signingSecret: { secret: 'slackSigning' },
    teamId: TEAM,
    allowedUsers: [ANA],
    responseUrlPrefix: `${answers.url}/`,
  };
  const world = await makeWorld(
    emu,
    db,
    {
      tenants: [
        { id: 1002, name: 'Globex', sources: { tenantEvents: { lookback: 'P30D' } } },
        { id: 1003, name: 'Initech', sources: { tenantEvents: { lookback: 'P30D' } } },
      ],
      destinations: {
        app: { type: 'slack', token: { secret: 'bot' }, channel: SLACK_CHANNEL, apiUrl: slack.url },
        globex: { type: 'webhook', url: hook.url },
      },
      routes: [
        { name: 'initech', match: { tenants: ['Initech'] }, to: ['app'] },
        { name: 'globex', match: { tenants: ['Globex'] }, to: ['globex'] },
      ],
      digest: { threshold: 50, maxItems: 20 },
      actions: { slack: slackActions },
    },
    { apiKey: MSSP_API_KEY.key, secrets: { bot: slack.token, slackSigning: SECRET }, clock: skipClock() },
  );
  await world.cycle('events');
  const env = readEnvironment({
    EXPOSURE_API_URL: emu.url,
    EXPOSURE_API_KEY: MSSP_API_KEY.key,
    TABLE_NAME: world.table,
    DYNAMODB_ENDPOINT: db.endpoint,
  });
  const deps = await createApiDeps(
    env,
    { apiClients: {}, slackSigning: SECRET },
    { logger: memoryLogger('info'), checkApiClients: false, slackActions },
  );
  const pending: Promise<void>[] = [];
  const looked: unknown[] = [];
  const app = createApiApp({
    ...deps,
    handOff: async (work) => {
      if (work.kind === 'slack-lookup') looked.push(work.query);
      pending.push(
        runSlackWork(
          { act: deps.act, lookup: deps.lookup, responseUrlPrefix: answers.url, logger: deps.logger },
          work,
        ),
      );
    },
  });
  const settled = async () => {
    while (pending.length) await Promise.all(pending.splice(0));
  };
  const post = (path: string, body: string) =>
    app.request(path, { method: 'POST', headers: slackSigned(body, SECRET), body });
  return { world, deps, post, settled, looked, answers };
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
    const { deps, post, settled } = await setUp();
    const item = initech()[1]?.item;
    const ids = (item?.identifiers ?? []).map((i) => i.id).join(',');
    const body = `payload=${encodeURIComponent(
      JSON.stringify({
        type: 'block_actions',
        user: { id: ANA },
        team: { id: TEAM },
        actions: [
          {
            action_id: 'exposure:silence',
            block_id: `exposure:1003:${item?.metadata.uid}`,
            selected_option: { value: `PT1H|${item?.metadata.type}|${ids}` },
            action_ts: '1716999999.000777',
          },
        ],
      }),
    )}`;
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
      team_id: TEAM,
      user_id: ANA,
      channel_id: SLACK_CHANNEL,
      command: '/exposure',
      text: 'lookup initech.test',
    }).toString();
    expect((await post('/slack/commands', command)).status).toBe(200);
    await settled();
    expect(looked).toEqual([{ domain: 'initech.test', tenant: '1003' }]);
    expect(
      control()
        .calls('identitiesByDomain')
        .map((c) => c.tenantId),
    ).toEqual([1003]);
  });
});

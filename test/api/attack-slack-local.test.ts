/**
 * An account menu chosen in Slack, as `serve` and `npm start` answer it (cli/commands/api.ts
 * `withLocalSlackWork`: Slack's work done in the process that answered, with its providers at
 * hand): the action is taken at once and the clicker hears its outcome at the click's
 * response_url, as a worker does it on AWS; not left for a delivery pass a minute later, unsaid.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiApp } from '../../lib/api/app.ts';
import { withLocalSlackWork } from '../../lib/cli/api-local.ts';
import { systemClock } from '../../lib/clock.ts';
import { IDENTITY_ACTION_ID, menuValue } from '../../lib/destinations/slack/identity-menu.ts';
import { ALL_ENTRA_ROLES } from '../../lib/emulator/identity/index.ts';
import { IdentityStore } from '../../lib/identity/store.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { type IdentityProviders, identityProviders } from '../helpers/identity-providers.ts';
import { type Receiver, startReceiver } from '../helpers/receiver.ts';
import { slackSigned } from '../helpers/slack-api.ts';
import { buildApi } from './harness.ts';
import { identityApi } from './identity-harness.ts';

const emu = useEmulator({ eventsPerTenant: 1, lateMatchesPerTenant: 0, credentials: 0 });
const db = useDynalite();
const LOGIN = 'lee@acme.test';
const SECRET = 'slack-signing-secret-for-local-work';
const TEAM = 'T0LOCAL';
const ANA = 'U0ANA';
let idp: IdentityProviders;
let answers: Receiver;

beforeAll(async () => {
  idp = await identityProviders({ entra: { roles: ALL_ENTRA_ROLES, users: [{ userPrincipalName: LOGIN }] } });
  answers = await startReceiver();
});
afterAll(async () => {
  await Promise.all([idp.close(), answers.close()]);
});

const until = async (done: () => boolean, ms: number) => {
  const end = Date.now() + ms;
  while (!done() && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
  return done();
};

describe('an account menu in Slack, served locally', () => {
  it('is acted on at once, and the clicker hears how it went', async () => {
    const table = { client: db.client, name: await db.table() };
    const base = buildApi(emu, {
      table,
      slack: {
        signingSecret: SECRET,
        teamId: TEAM,
        allowedUsers: [ANA],
        responseUrlPrefix: `${answers.url}/`,
      },
    });
    const withIdentity = identityApi(base, table, { idp });
    const itemKey = 'cred-local';
    const { handOff: _given, ...deps } = base.deps;
    const app = createApiApp(
      withLocalSlackWork({
        ...deps,
        close: () => {},
        identity: {
          accounts: async () => withIdentity.accounts,
          known: async () => ({
            identity: [{ scope: 'top' as const, provider: 'corp', type: 'entra' as const }],
          }),
        },
      }),
    );
    await new IdentityStore({ client: db.client, tableName: table.name, clock: systemClock }).keepVerdicts(
      [
        {
          key: itemKey,
          scope: 'top',
          login: LOGIN,
          verdict: { provider: 'corp', verdict: 'at_risk', leakDate: '2026-01-02' },
        },
      ],
      true,
    );
    const body = `payload=${encodeURIComponent(
      JSON.stringify({
        type: 'block_actions',
        user: { id: ANA },
        team: { id: TEAM },
        response_url: `${answers.url}/actions/${randomUUID()}`,
        actions: [
          {
            action_id: IDENTITY_ACTION_ID,
            block_id: 'b1',
            action_ts: String(Date.now() / 1000),
            selected_option: { value: menuValue('revokeSessions', itemKey) },
          },
        ],
      }),
    )}`;
    const res = await app.request('/slack/interactions', {
      method: 'POST',
      headers: slackSigned(body, SECRET),
      body,
    });
    expect(res.status).toBe(200);
    expect(await until(() => answers.requests.length > 0, 5_000), base.logger.lines.join('\n')).toBe(true);
    expect(idp.actions.filter((a) => a.action === 'revokeSessions').map((a) => a.login)).toEqual([LOGIN]);
    const text = (answers.requests.at(0)?.json() as { text?: string } | undefined)?.text;
    expect(text).toMatch(/^Done: /);
    expect(text).toContain(`${LOGIN}: done`);
  });
});

/**
 * A dry run acts on nothing outside, whatever its table holds (section 1 and 12): actions a real
 * run left open on the same table (an event action, an automatic account action, both interrupted
 * a while ago) are not finished by the dry run's delivery pass, so neither the emulator nor the
 * identity stand-in hears a call; the real run's next pass finishes them, which shows they were
 * there to take. A dry run's table can be a real run's today: `start --dry-run` with TABLE_NAME.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { recordAction } from '../../lib/actions/events.ts';
import { systemClock } from '../../lib/clock.ts';
import { runDeliveryPass } from '../../lib/deliver/pass.ts';
import { ALL_ENTRA_ROLES } from '../../lib/emulator/identity/index.ts';
import { readEnvironment } from '../../lib/env.ts';
import { accountStore, recordAccountAction } from '../../lib/identity/act.ts';
import { IdentityStore } from '../../lib/identity/store.ts';
import { memoryLogger } from '../../lib/log.ts';
import { createRuntime } from '../../lib/runtime.ts';
import { fakeClock } from '../helpers/clock.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { identityProviders } from '../helpers/identity-providers.ts';
import { configFrom } from '../helpers/world.ts';

const emu = useEmulator({ eventsPerTenant: 2, lateMatchesPerTenant: 0, credentials: 0 });
const db = useDynalite();
const LOGIN = 'kim@acme.test';
let table: string;

beforeAll(async () => {
  table = await db.table();
});

describe('a dry run beside a real run’s open actions', () => {
  it('finishes none of them: no upstream call, no provider call; the real run’s pass does', async () => {
    const idp = await identityProviders({
      entra: { roles: ALL_ENTRA_ROLES, users: [{ userPrincipalName: LOGIN }] },
    });
    try {
      const runtime = (dryRun: boolean) =>
        createRuntime({
          env: readEnvironment({
            EXPOSURE_API_URL: emu.url,
            EXPOSURE_API_TOKEN: 'emu-acme-token',
            TABLE_NAME: table,
            DYNAMODB_ENDPOINT: db.endpoint,
          }),
          config: configFrom({
            sources: { tenantEvents: { enabled: true } },
            identity: { providers: idp.providers({ entra: ['acme.test'] }) },
            destinations: { local: { type: 'console' } },
            routes: [{ name: 'all', to: ['local'] }],
          }),
          secrets: idp.secrets,
          logger: memoryLogger('info'),
          dynamo: db.client,
          upstream: emu.client(),
          dryRun,
          write: () => {},
        });
      // What a real run left: both recorded two minutes ago, past their hold, never answered.
      const io = { client: db.client, tableName: table, clock: systemClock };
      const past = fakeClock(Date.now() - 120_000);
      const user = idp.stand.entra.user(LOGIN);
      await new IdentityStore(io).keepVerdicts(
        [
          {
            key: 'cred-1',
            scope: 'top',
            login: LOGIN,
            verdict: { provider: 'corp', verdict: 'at_risk', userId: user?.id, leakDate: '2026-01-02' },
          },
        ],
        true,
      );
      await recordAccountAction(
        { actions: accountStore(io), clock: past },
        { id: 'auto-open', action: 'revokeSessions', logins: [LOGIN], by: 'auto' },
      );
      const real = await runtime(false);
      const uid = emu.running.emulator.dataset.tenant('acme').events[0]?.item.metadata.uid as string;
      await recordAction(
        { actions: (await real.act()).actions, clock: past },
        { id: 'ignore-open', type: 'ignore', uids: [uid], by: 'cli:someone' },
      );
      const eventCalls = () => emu.running.emulator.control.calls('eventActions').length;

      const dry = await runtime(true);
      await runDeliveryPass(dry.deliver, { deadline: Date.now() + 20_000 });
      expect(idp.actions).toEqual([]);
      expect(idp.requests).toEqual([]);
      expect(eventCalls()).toBe(0);

      await runDeliveryPass(real.deliver, { deadline: Date.now() + 20_000 });
      expect(idp.actions.map((a) => [a.action, a.login])).toEqual([['revokeSessions', LOGIN]]);
      expect(eventCalls()).toBe(1);
    } finally {
      await idp.close();
    }
  });
});

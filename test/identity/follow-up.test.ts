/**
 * An account action is followed up where the login's credentials were alerted: a webhook with
 * `followUps: true` gets the action body with the credential, once per credential, after a real
 * poll and delivery pass (emulator, dynalite, the providers' stand-in, a real receiver).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runDeliveryPass } from '../../lib/deliver/pass.ts';
import { ALL_ENTRA_ROLES } from '../../lib/emulator/identity/index.ts';
import { readEnvironment } from '../../lib/env.ts';
import { actOnAccounts } from '../../lib/identity/act.ts';
import { memoryLogger } from '../../lib/log.ts';
import { runPollCycle } from '../../lib/poll/cycle.ts';
import { createRuntime } from '../../lib/runtime.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { type IdentityProviders, identityProviders } from '../helpers/identity-providers.ts';
import { type Receiver, startReceiver } from '../helpers/receiver.ts';
import { configFrom } from '../helpers/world.ts';

const emu = useEmulator({ credentials: 0 });
const db = useDynalite();
let idp: IdentityProviders;
let hook: Receiver;

beforeAll(async () => {
  idp = await identityProviders({
    entra: {
      users: [{ userPrincipalName: 'pat@follow.test', lastPasswordChangeDateTime: '2001-01-01T00:00:00Z' }],
    },
  });
  idp.stand.entra.roles = [...ALL_ENTRA_ROLES];
  hook = await startReceiver();
});
afterAll(async () => {
  await Promise.all([idp.close(), hook.close()]);
});

describe('an account action’s follow-up', () => {
  it('reaches the webhook that was sent each of the login’s credentials, once each', async () => {
    const runtime = await createRuntime({
      env: readEnvironment({
        EXPOSURE_API_URL: emu.url,
        EXPOSURE_API_TOKEN: 'emu-acme-token',
        TABLE_NAME: await db.table(),
        DYNAMODB_ENDPOINT: db.endpoint,
      }),
      config: configFrom({
        sources: { credentials: { domains: ['follow.test'], lookback: 'P1D' } },
        identity: { providers: idp.providers({ entra: ['follow.test'] }) },
        destinations: { siem: { type: 'webhook', url: hook.url, followUps: true } },
        routes: [{ name: 'all', to: ['siem'] }],
        digest: { threshold: 1000, maxItems: 20 },
      }),
      secrets: idp.secrets,
      logger: memoryLogger('info'),
      dynamo: db.client,
      upstream: emu.client(),
      write: () => {},
    });
    const leaked = emu.running.emulator.dataset.appendCredentials(2, { logins: ['pat@follow.test'] });
    await runPollCycle(runtime.cycle, 'credentials', { deadline: Date.now() + 60_000 });
    expect(hook.requests).toHaveLength(1);
    hook.requests.length = 0;
    const act = runtime.identityAct;
    if (!act) throw new Error('no identityAct');
    const outcome = await actOnAccounts(act, {
      action: 'revokeSessions',
      logins: ['pat@follow.test'],
      by: 'cli:tester',
      reason: 'leaked twice',
    });
    expect(outcome.results).toEqual([{ login: 'pat@follow.test', ok: true }]);
    await runDeliveryPass(runtime.deliver, { deadline: Date.now() + 30_000 });
    await runDeliveryPass(runtime.deliver, { deadline: Date.now() + 30_000 });
    const bodies = hook.requests.map(
      (r) =>
        r.json() as {
          kind: string;
          action: { type: string; by: string; reason?: string };
          items: { id: number }[];
        },
    );
    expect(
      bodies.every(
        (b) => b.kind === 'action' && b.action.type === 'revokeSessions' && b.action.by === 'cli:tester',
      ),
    ).toBe(true);
    expect(bodies.flatMap((b) => b.items.map((i) => i.id)).sort()).toEqual(leaked.map((c) => c.id).sort());
  });
});

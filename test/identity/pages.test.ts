/**
 * A credential stream's pages and their identity lookups (lib/poll/stream.ts, lib/identity/lookup.ts)
 * through a real poll cycle against the emulator, dynalite and the providers' stand-in: a page's
 * lookups do not hold up the next pages' fetches and lookups, yet nothing of a page is recorded,
 * sent or passed by the cursor before its own lookups are done, and each login is asked once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readEnvironment } from '../../lib/env.ts';
import { memoryLogger } from '../../lib/log.ts';
import { runPollCycle } from '../../lib/poll/cycle.ts';
import type { PollStep } from '../../lib/poll/types.ts';
import { createRuntime } from '../../lib/runtime.ts';
import { fakeClock } from '../helpers/clock.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { verdictOf } from '../helpers/identity-lookup.ts';
import { type IdentityProviders, identityProviders } from '../helpers/identity-providers.ts';
import { type Receiver, startReceiver } from '../helpers/receiver.ts';
import { configFrom } from '../helpers/world.ts';

const emu = useEmulator({ credentials: 0 });
const db = useDynalite();
let idp: IdentityProviders;
let hook: Receiver;

/** Three pages of two credentials each, one person a credential. */
const PAGES = [
  ['a1@pages.test', 'a2@pages.test'],
  ['b1@pages.test', 'b2@pages.test'],
  ['c1@pages.test', 'c2@pages.test'],
];
const LOGINS = PAGES.flat();

beforeAll(async () => {
  idp = await identityProviders({
    entra: {
      users: LOGINS.map((login) => ({
        userPrincipalName: login,
        lastPasswordChangeDateTime: '2001-01-01T00:00:00Z',
      })),
    },
  });
  hook = await startReceiver();
});
afterAll(async () => {
  await Promise.all([idp.close(), hook.close()]);
});

/** Waits (a few ms at a time, at most 8 s) until `done` holds. */
async function until(done: () => boolean): Promise<void> {
  const end = Date.now() + 8_000;
  while (!done() && Date.now() < end) await new Promise((r) => setTimeout(r, 5));
}

/** Whether the stand-in answered a lookup of `person` by UPN (it notes a request once answered). */
const askedFor = (person: string) =>
  idp.requests.some(
    (r) => r.endpoint === 'graphUser' && r.path.toLowerCase().endsWith(`/${person}%40pages.test`),
  );
type Sent = { identity_name: string };
const received = () => hook.requests.flatMap((r) => (r.json() as { items: Sent[] }).items);

describe('a credential page’s identity lookups', () => {
  it('overlap the next pages’ fetch and lookups; the page is recorded, sent and passed only once its own are done', async () => {
    emu.running.emulator.dataset.appendCredentials(LOGINS.length, { logins: LOGINS });
    // b1's lookup gets no answer until the test releases it (a 504 then: b1 is `unknown`).
    idp.stand.control.addFault({
      provider: 'entra',
      endpoint: 'graphUser',
      path: 'b1%40pages.test',
      hang: true,
    });
    const clock = fakeClock();
    const runtime = await createRuntime({
      env: readEnvironment({
        EXPOSURE_API_URL: emu.url,
        EXPOSURE_API_TOKEN: 'emu-acme-token',
        TABLE_NAME: await db.table(),
        DYNAMODB_ENDPOINT: db.endpoint,
      }),
      config: configFrom({
        sources: { credentials: { domains: ['pages.test'], lookback: 'P1D', pageSize: 2 } },
        identity: { providers: idp.providers({ entra: ['pages.test'] }) },
        destinations: { siem: { type: 'webhook', url: hook.url } },
        routes: [{ name: 'all', to: ['siem'] }],
      }),
      secrets: idp.secrets,
      logger: memoryLogger(),
      dynamo: db.client,
      upstream: emu.client(),
      clock,
      // b1's lookup waits for the test, never for its 3 seconds to run out.
      identity: { lookupTimeoutMs: 60_000 },
    });
    const steps: PollStep[] = [];
    runtime.poll.checkpoint = (step) => {
      steps.push(step);
    };
    const count = (step: PollStep) => steps.filter((s) => s === step).length;
    const cycle = runPollCycle(runtime.cycle, 'credentials', { deadline: clock.now() + 60_000 });
    let during: Record<string, unknown> = {};
    try {
      await until(() => askedFor('c1') && askedFor('c2') && count('cursor-advanced') > 0);
      // What stood once page 3's logins were looked up and page 1 was written.
      during = {
        page3Asked: askedFor('c1') && askedFor('c2'),
        b1Answered: askedFor('b1'),
        recordsWritten: count('records-written'),
        cursorSteps: count('cursor-advanced'),
        sent: received().map((i) => i.identity_name),
      };
    } finally {
      idp.stand.control.releaseHangs();
    }
    const summary = await cycle;
    expect(summary.exitCode).toBe(0);
    // Page 3 was fetched and its logins looked up while page 2's b1 had no answer (a stream that
    // waits page by page asks for page 3 only once b1 is answered); yet only page 1 was written,
    // sent and behind the cursor: page 2 waited for b1, page 3 for page 2.
    expect(during).toEqual({
      page3Asked: true,
      b1Answered: false,
      recordsWritten: 1,
      cursorSteps: 1,
      sent: PAGES[0],
    });
    expect(count('records-written')).toBe(4); // the three pages, and the empty one that ends the feed
    // Every credential once, each with its account's verdict (b1 none: its lookup got no answer).
    const items = received();
    expect(items.map((i) => i.identity_name).sort()).toEqual([...LOGINS].sort());
    expect(Object.fromEntries(items.map((i) => [i.identity_name, verdictOf(i)]))).toEqual(
      Object.fromEntries(LOGINS.map((l) => [l, l.startsWith('b1') ? 'unknown/unavailable' : 'at_risk'])),
    );
    // Each login asked once by its UPN.
    const byUpn = idp.requests.filter((r) => r.endpoint === 'graphUser').map((r) => r.path.toLowerCase());
    expect(byUpn).toHaveLength(LOGINS.length);
    expect(new Set(byUpn).size).toBe(LOGINS.length);
  });
});

/**
 * 9. What identity lookups cost a credential cycle (issue 36): the same cycle with and without an
 * identity provider.
 *
 * The emulator (in this process; 10 ms added to every upstream request) holds 1,000 new leaked
 * credentials of acme.test naming 300 people (each at least once, the rest drawn among them, in a
 * seeded shuffle), 10 pages of 100. Its Entra ID stand-in (lib/emulator/identity, at the same
 * origin) answers each request after 100 ms and holds a directory for those people: most found by
 * their UPN (at risk, rotated, disabled, synced from on-premises), one in twenty only by their mail
 * (their UPN is the tenant's onmicrosoft.com one) and one in twenty with no account, so those 30
 * cost Graph's mail search after a 404 (the fallbacks).
 * Two bench workers (each in the poller's memory cgroup, procs.ts) run the real `credentials` poll
 * cycle, delivery pass included, everything routed to one webhook receiver, each round on a fresh
 * dynalite table: one with no `identity` in its config, one with an Entra provider covering
 * acme.test. One warm-up round of each (JIT; the second buys the Entra token, which the worker then
 * keeps for its hour, as a warm Lambda does), then ROUNDS rounds of each, taking turns. Every round
 * must deliver each credential exactly once; with the provider, each with `_identity` and the
 * verdict its person's account gives, each login looked up exactly once.
 *
 * The time budget is set against the lookups' floor in the same run: the Graph requests made, 100 ms
 * each, CONCURRENCY at a time. Lookups one at a time would take eight times the floor (and run
 * into the cycle's 30 seconds of lookups), and a page's lookups waiting for the page before to
 * finish its own (its last few in flight, the slots idle) about 1.4 times; the budget, 1.2, catches
 * both: a page's lookups overlap the next pages' fetches and lookups (lib/poll/stream.ts). The
 * ratio to the cycle without lookups is reported, not budgeted: its baseline is a few tenths of a
 * second, so it swings with the host more than with our code. The provider requests budgeted are
 * the first cycle's, the one that buys the token: a lookup a login, the mail searches, one token.
 * The provider's lane (its `requestsPerSecond`, shared by every run) is set high here, so what is
 * measured is the lookups' concurrency; each request's turn of it costs a DynamoDB write all the
 * same (in the DynamoDB requests' budget).
 *
 * Then the shared lane itself (identity-lane.ts): three workers at once, one lane between them.
 */

import { POLLER_MEMORY_MB } from '../../infra/function.ts';
import { DEMO_ENTRA } from '../../lib/emulator/identity/demo-providers.ts';
import type { EntraUserInput } from '../../lib/emulator/identity/entra.ts';
import type { IdentityEndpoint } from '../../lib/emulator/identity/index.ts';
import { startEmulator } from '../../lib/emulator/index.ts';
import { createRandom } from '../../lib/emulator/random.ts';
import { CONCURRENCY } from '../../lib/identity/lookup.ts';
import type { DrainRun, DrainSetup, KindRun } from './drain.ts';
import { demoEntraSetup, measureSharedLane } from './identity-lane.ts';
import { createTable, deleteTable, startDynaliteProcess, startWorker, type Worker } from './procs.ts';
import { startBenchReceiver } from './receiver.ts';
import { type Figure, figure } from './report.ts';
import { median, round } from './stats.ts';

const ROUNDS = 3;
const PEOPLE = 300;
const LEAKS = 1_000;
const LOOKUP_MS = 100;
const UPSTREAM_MS = 10;
const DOMAIN = DEMO_ENTRA.domain;
/** The most the cycle with lookups may take over the one without, in floors of its lookups. */
const MAX_OVER_FLOOR = 1.2;
/** The provider's lane in the first measurement: far above what 8 lookups in flight at 100 ms send (80 a second). */
const LANE_OUT_OF_THE_WAY = 110;

/** What a person's account is, and so the verdict each of their leaks must carry. */
type Person = 'at_risk' | 'rotated' | 'disabled' | 'unmanaged' | 'mail_only' | 'no_account';
const FOUND_BY_UPN: readonly Person[] = ['at_risk', 'rotated', 'rotated', 'disabled', 'unmanaged'];

function personOf(i: number): Person {
  if (i % 20 === 18) return 'mail_only';
  if (i % 20 === 19) return 'no_account';
  return FOUND_BY_UPN[i % FOUND_BY_UPN.length] as Person;
}

/** The verdict as the receiver notes it (`verdict/reason`). */
const EXPECTED: Record<Person, string> = {
  at_risk: 'at_risk',
  rotated: 'rotated',
  disabled: 'disabled',
  unmanaged: 'unknown/unmanaged',
  mail_only: 'at_risk',
  no_account: 'no_account',
};

/** The 300 logins, then 1,000 leaks of them: each login once, the rest drawn, all shuffled. */
function leaks(): { logins: string[]; sequence: string[] } {
  const r = createRandom('bench:identity');
  const logins = Array.from({ length: PEOPLE }, (_, i) => `user${String(i + 1).padStart(3, '0')}@${DOMAIN}`);
  const sequence = [...logins, ...Array.from({ length: LEAKS - PEOPLE }, () => r.pick(logins))];
  for (let i = sequence.length - 1; i > 0; i--) {
    const j = r.int(0, i);
    [sequence[i], sequence[j]] = [sequence[j] as string, sequence[i] as string];
  }
  return { logins, sequence };
}

/** The directory entry of person `i` (none for `no_account`); `rotatedAt` is after every leak. */
function account(login: string, person: Person, rotatedAt: string): EntraUserInput | undefined {
  const local = login.slice(0, login.indexOf('@'));
  const old = { createdDateTime: '2015-01-01T00:00:00Z', lastPasswordChangeDateTime: '2016-01-01T00:00:00Z' };
  switch (person) {
    case 'no_account':
      return undefined;
    case 'mail_only':
      return { userPrincipalName: `${local}@${DEMO_ENTRA.tenantDomain}`, mail: login, ...old };
    case 'rotated':
      return { userPrincipalName: login, ...old, lastPasswordChangeDateTime: rotatedAt };
    case 'disabled':
      return { userPrincipalName: login, ...old, accountEnabled: false };
    case 'unmanaged':
      return { userPrincipalName: login, ...old, onPremisesSyncEnabled: true };
    default:
      return { userPrincipalName: login, ...old };
  }
}

function check(condition: boolean, message: string): void {
  if (!condition) throw new Error(`identity: ${message}`);
}

interface Round {
  run: KindRun;
  /** Requests the Entra stand-in got during the cycle, by endpoint. */
  entra: Partial<Record<IdentityEndpoint, number>>;
  /** Distinct logins asked by UPN. */
  loginsAsked: number;
}

const requestsPerCredential = (run: KindRun) =>
  Object.values(run.requests).reduce((a, b) => a + b, 0) / run.newItems;

export async function measureIdentity(
  log: (line: string) => void,
): Promise<{ figures: Figure[]; raw: unknown }> {
  const db = await startDynaliteProcess();
  const emu = await startEmulator({ seed: 42, credentials: 0 });
  const hook = await startBenchReceiver('webhook');
  const workers: Worker[] = [];
  try {
    emu.emulator.control.latencyMs = UPSTREAM_MS;
    const { logins, sequence } = leaks();
    const added = emu.emulator.dataset.appendCredentials(LEAKS, { domain: DOMAIN, logins: sequence });
    const expected = new Map<string, string>();
    const people = new Map(logins.map((login, i) => [login, personOf(i)]));
    for (const c of added)
      expected.set(`credential:${c.id}`, EXPECTED[people.get(c.identity_name) as Person]);
    // Set after the leaks were appended: on or after every leak's date, whichever the product takes.
    const rotatedAt = new Date().toISOString();
    for (const [login, person] of people) {
      const user = account(login, person, rotatedAt);
      if (user) emu.emulator.identity.entra.addUser(user);
    }
    const count = (person: Person) => [...people.values()].filter((p) => p === person).length;
    const byMail = count('mail_only');
    const fallbacks = byMail + count('no_account');
    const idp = emu.emulator.identity.control;
    idp.latencyMs = LOOKUP_MS;

    const base: DrainSetup = {
      apiUrl: emu.url,
      token: emu.emulator.dataset.tenant('acme').token,
      dynamoEndpoint: db.url,
      destinations: { siem: { type: 'webhook', url: hook.url } },
      domain: DOMAIN,
      eventsLookback: 'P1D',
      credentialsLookback: 'P1D',
    };
    // The lane out of the way: the default 5 a second would hold 331 requests over a minute.
    const withIdentity: DrainSetup = { ...base, ...demoEntraSetup(emu.url, [DOMAIN], LANE_OUT_OF_THE_WAY) };
    const plain = await startWorker('drain', base, { memorySize: POLLER_MEMORY_MB });
    workers.push(plain);
    const looking = await startWorker('drain', withIdentity, { memorySize: POLLER_MEMORY_MB });
    workers.push(looking);

    let tables = 0;
    const cycle = async (worker: Worker, lookups: boolean): Promise<Round> => {
      hook.reset();
      idp.clearLog();
      const table = await createTable(db.url, `identity-${tables++}`);
      const product = await worker.request<DrainRun>({ type: 'product', table, kinds: ['credentials'] });
      await deleteTable(db.url, table);
      const run = product.kinds[0] as KindRun;
      const what = lookups ? 'with the provider' : 'without';
      check(run.exitCode === 0, `the cycle ${what} exited ${run.exitCode}`);
      check(run.newItems === LEAKS && run.sent === LEAKS, `${what}: ${run.newItems} new, ${run.sent} sent`);
      check(
        hook.keys.size === LEAKS && [...expected.keys()].every((k) => hook.keys.has(k)),
        `${what}: the receiver got ${hook.keys.size} distinct credentials, not the ${LEAKS} leaked`,
      );
      check(hook.duplicates() === 0, `${what}: the receiver got ${hook.duplicates()} credentials twice`);
      const entra: Round['entra'] = {};
      for (const r of idp.calls({ provider: 'entra' })) entra[r.endpoint] = (entra[r.endpoint] ?? 0) + 1;
      const asked = new Set(idp.calls({ endpoint: 'graphUser' }).map((r) => r.path.toLowerCase()));
      if (!lookups) {
        check(
          hook.verdicts.size === 0,
          `${hook.verdicts.size} credentials carried _identity with no provider`,
        );
        check(
          idp.requests.length === 0,
          `${idp.requests.length} requests reached the provider with none configured`,
        );
      } else {
        const wrong = [...expected].filter(([key, verdict]) => hook.verdicts.get(key) !== verdict);
        check(
          wrong.length === 0,
          `${wrong.length} credentials arrived without the verdict of their account, e.g. ${wrong
            .slice(0, 3)
            .map(([key, verdict]) => `${key}: ${hook.verdicts.get(key) ?? 'none'}, not ${verdict}`)
            .join('; ')}`,
        );
        check(
          entra.graphUser === PEOPLE && asked.size === PEOPLE,
          `${entra.graphUser} lookups by UPN of ${asked.size} logins, not one for each of the ${PEOPLE}`,
        );
        check(entra.graphUsers === fallbacks, `${entra.graphUsers} mail searches, not ${fallbacks}`);
      }
      return { run, entra, loginsAsked: asked.size };
    };

    const warmup = { without: await cycle(plain, false), with: await cycle(looking, true) };
    log(
      `  identity warm-up: without ${round(warmup.without.run.ms / 1000)} s, with ${round(warmup.with.run.ms / 1000)} s`,
    );
    const rounds: { without: Round; with: Round }[] = [];
    for (let i = 1; i <= ROUNDS; i++) {
      const r = { without: await cycle(plain, false), with: await cycle(looking, true) };
      rounds.push(r);
      log(
        `  identity round ${i}: without ${round(r.without.run.ms / 1000)} s, with ${round(r.with.run.ms / 1000)} s`,
      );
    }
    // Token requests are a figure, not a check: the first cycle's are budgeted (one is enough).
    const tokens = (r: Round) => r.entra.entraToken ?? 0;
    check(
      rounds.every((r) => tokens(r.with) === 0),
      'a later cycle bought the Entra token again instead of keeping it for its hour',
    );

    const graph = (r: Round) => (r.entra.graphUser ?? 0) + (r.entra.graphUsers ?? 0);
    const graphRequests = graph(rounds[0]?.with as Round);
    const floorMs = (graphRequests * LOOKUP_MS) / CONCURRENCY;
    const withoutMs = median(rounds.map((r) => r.without.run.ms));
    const withMs = median(rounds.map((r) => r.with.run.ms));
    const overFloor = rounds.map((r) => (r.with.run.ms - r.without.run.ms) / floorMs);
    const ratios = rounds.map((r) => r.with.run.ms / r.without.run.ms);
    const perCredential = (side: 'with' | 'without') =>
      median(rounds.map((r) => requestsPerCredential(r[side].run)));
    const providerRequests = graph(warmup.with) + tokens(warmup.with);
    const section = 'identity' as const;
    const figures: Figure[] = [
      figure({
        section,
        id: 'identity.withoutS',
        label: `credentials cycle, ${LEAKS.toLocaleString('en')} new leaked logins of ${PEOPLE} people, no identity (median of ${ROUNDS})`,
        value: round(withoutMs / 1000),
        unit: 's',
        detail: `rounds ${rounds.map((r) => round(r.without.run.ms / 1000)).join(', ')} s`,
      }),
      figure({
        section,
        id: 'identity.withS',
        label: `… with an Entra ID provider answering in ${LOOKUP_MS} ms (median of ${ROUNDS})`,
        value: round(withMs / 1000),
        unit: 's',
        detail: `rounds ${rounds.map((r) => round(r.with.run.ms / 1000)).join(', ')} s; warm-up (buys the token) ${round(warmup.with.run.ms / 1000)} s`,
      }),
      figure({
        section,
        id: 'identity.ratio',
        label: '… with ÷ without',
        value: round(median(ratios), 1),
        unit: 'x',
        detail: `rounds ${ratios.map((r) => round(r, 1)).join(', ')}`,
      }),
      figure({
        section,
        id: 'identity.overFloor',
        label: `… time added ÷ the lookups' floor (Graph requests × ${LOOKUP_MS} ms ÷ ${CONCURRENCY} in flight)`,
        value: round(median(overFloor)),
        unit: 'x',
        budget: { max: MAX_OVER_FLOOR, holds: 'ratio' },
        detail: `floor ${round(floorMs / 1000)} s for ${graphRequests} requests; rounds ${overFloor.map((r) => round(r)).join(', ')}`,
      }),
      figure({
        section,
        id: 'identity.providerRequests',
        label: '… Entra requests in the first cycle: lookups, mail searches, token',
        value: providerRequests,
        unit: '',
        budget: { max: PEOPLE + 1 + fallbacks, holds: 'count' },
        detail: `${warmup.with.entra.graphUser} by UPN (one a login), ${warmup.with.entra.graphUsers} mail searches after a 404 (${byMail} found by mail, ${fallbacks - byMail} no account), ${tokens(warmup.with)} token request${tokens(warmup.with) === 1 ? '' : 's'}; later cycles keep the token: ${graph(rounds[0]?.with as Round)}`,
      }),
      figure({
        section,
        id: 'identity.requestsWithout',
        label: 'DynamoDB requests per new credential, no identity',
        value: round(perCredential('without'), 3),
        unit: '',
      }),
      figure({
        section,
        id: 'identity.requestsWith',
        label: '… with the provider (answers and verdicts kept in the table; a turn of its lane a request)',
        value: round(perCredential('with'), 3),
        unit: '',
        // 0.20 to keep answers and verdicts; one write a Graph request for its turn of the shared
        // lane (330 here, 0.33), and now and then one more when the lane went idle between bursts.
        budget: { max: 0.65, holds: 'count' },
        detail: `every credential once, with the _identity of its account; ${graphRequests} turns of the provider's lane`,
      }),
    ];
    const lane = await measureSharedLane({ emu, dynamoEndpoint: db.url, hook, base }, log);
    figures.push(...lane.figures);
    return {
      figures,
      raw: {
        lane: lane.raw,
        fallbacks,
        floorMs,
        warmup,
        rounds: rounds.map((r) => ({
          without: { ms: r.without.run.ms, requests: r.without.run.requests },
          with: { ms: r.with.run.ms, requests: r.with.run.requests, entra: r.with.entra },
        })),
      },
    };
  } finally {
    for (const worker of workers) await worker.stop();
    await hook.close();
    await emu.close();
    await db.stop();
  }
}

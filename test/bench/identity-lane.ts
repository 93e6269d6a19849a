/**
 * The identity section's shared lane (issue 46, defect 4): three bench workers (three processes,
 * as three Lambda workers are) run the real `credentials` poll cycle at the same moment on one
 * dynalite table, each its own credential domain, every login in one Entra provider, so their
 * lookups take turns of one lane: `requestsPerSecond` LANE_RATE for the deployment. The Entra
 * stand-in refuses (a 429) any request over LANE_RATE in a second (control.ceiling), and its log
 * says when each request arrived: the budget is the most it received in any sliding second (a
 * count, at most the lane's rate), and the refusals (a count, 0). Every credential must arrive once
 * with its account's verdict, so no lookup was given up for want of a turn.
 */
import { POLLER_MEMORY_MB } from '../../infra/function.ts';
import { DEMO_ENTRA } from '../../lib/emulator/identity/demo-providers.ts';
import { identityUrls } from '../../lib/emulator/identity/paths.ts';
import type { startEmulator } from '../../lib/emulator/index.ts';
import type { DrainRun, DrainSetup } from './drain.ts';
import { createTable, deleteTable, startWorker, type Worker } from './procs.ts';
import type { BenchReceiver } from './receiver.ts';
import { type Figure, figure } from './report.ts';
import { mostInASecond, round } from './stats.ts';

const WORKERS = 3;
/** Distinct people leaked per worker's domain, each once: a lookup each. */
const PEOPLE = 40;
/** The Entra lane's rate: high enough to finish in seconds, low enough that three workers would pass it unpaced. */
const LANE_RATE = 10;
const SECRET_NAME = 'benchEntraClientSecret';

/**
 * What a drain worker's setup needs to look up in the emulator's demo Entra tenant: its `identity`
 * section (one provider, `corp`, for `domains`, its lane at `requestsPerSecond`) and its `secrets`.
 */
export function demoEntraSetup(
  emuUrl: string,
  domains: string[],
  requestsPerSecond: number,
): Pick<DrainSetup, 'identity' | 'secrets'> {
  const { loginUrl, graphUrl } = identityUrls(emuUrl);
  return {
    identity: {
      providers: {
        corp: {
          type: 'entra',
          tenantId: DEMO_ENTRA.tenantId,
          clientId: DEMO_ENTRA.clientId,
          clientSecret: { secret: SECRET_NAME },
          domains,
          requestsPerSecond,
          loginUrl,
          graphUrl,
        },
      },
    },
    secrets: { [SECRET_NAME]: DEMO_ENTRA.clientSecret },
  };
}

export async function measureSharedLane(
  parts: {
    emu: Awaited<ReturnType<typeof startEmulator>>;
    dynamoEndpoint: string;
    hook: BenchReceiver;
    base: DrainSetup;
  },
  log: (line: string) => void,
): Promise<{ figures: Figure[]; raw: unknown }> {
  const { emu, hook } = parts;
  const idp = emu.emulator.identity;
  const domains = Array.from({ length: WORKERS }, (_, i) => `lane${i + 1}.test`);
  const expected = new Map<string, string>();
  for (const domain of domains) {
    const logins = Array.from({ length: PEOPLE }, (_, i) => `p${i}@${domain}`);
    for (const login of logins)
      idp.entra.addUser({
        userPrincipalName: login,
        createdDateTime: '2015-01-01T00:00:00Z',
        lastPasswordChangeDateTime: '2016-01-01T00:00:00Z',
      });
    for (const c of emu.emulator.dataset.appendCredentials(PEOPLE, { domain, logins }))
      expected.set(`credential:${c.id}`, 'at_risk');
  }
  const lookups = demoEntraSetup(emu.url, domains, LANE_RATE);
  const workers: Worker[] = [];
  const savedLatency = idp.control.latencyMs;
  try {
    for (const domain of domains)
      workers.push(
        await startWorker('drain', { ...parts.base, domain, ...lookups }, { memorySize: POLLER_MEMORY_MB }),
      );
    const table = await createTable(parts.dynamoEndpoint, 'identity-lane');
    hook.reset();
    idp.control.clearLog();
    idp.control.latencyMs = 20;
    idp.control.ceiling = { entra: LANE_RATE };
    const started = performance.now();
    const runs = await Promise.all(
      workers.map((w) => w.request<DrainRun>({ type: 'product', table, kinds: ['credentials'] })),
    );
    const ms = performance.now() - started;
    await deleteTable(parts.dynamoEndpoint, table);
    const exits = runs.map((r) => r.kinds[0]?.exitCode);
    if (exits.some((code) => code !== 0))
      throw new Error(`identity lane: the cycles exited ${exits.join(', ')}`);
    const wrong = [...expected].filter(([key, verdict]) => hook.verdicts.get(key) !== verdict);
    if (hook.keys.size !== expected.size || wrong.length || hook.duplicates())
      throw new Error(
        `identity lane: ${hook.keys.size} of ${expected.size} credentials arrived, ${wrong.length} without their account's verdict (e.g. ${wrong
          .slice(0, 3)
          .map(([key]) => `${key}: ${hook.verdicts.get(key) ?? 'none'}`)
          .join('; ')}), ${hook.duplicates()} twice`,
      );
    const graph = idp.control.requests.filter(
      (r) => r.endpoint === 'graphUser' || r.endpoint === 'graphUsers',
    );
    const most = mostInASecond(graph.map((r) => Date.parse(r.at)));
    const refused = graph.filter((r) => r.status === 429).length;
    log(
      `  identity lane: ${WORKERS} workers, ${graph.length} Graph requests in ${round(ms / 1000)} s, at most ${most} in a second, ${refused} refused`,
    );
    const section = 'identity' as const;
    return {
      figures: [
        figure({
          section,
          id: 'identity.laneMostInASecond',
          label: `${WORKERS} workers looking up at once (${WORKERS * PEOPLE} logins, one Entra lane at ${LANE_RATE} a second): Graph requests in any second`,
          value: most,
          unit: '',
          budget: { max: LANE_RATE, holds: 'count' },
          detail: `${graph.length} requests in ${round(ms / 1000)} s (the lane paces at 90%: ${round(graph.length / (LANE_RATE * 0.9))} s at the least)`,
        }),
        figure({
          section,
          id: 'identity.laneRefused',
          label: '… refused by the stand-in for rate (429)',
          value: refused,
          unit: '',
          budget: { max: 0, holds: 'count' },
        }),
      ],
      raw: { ms, requests: graph.length, most, refused, workers: runs.map((r) => r.kinds[0]?.ms) },
    };
  } finally {
    idp.control.ceiling = {};
    idp.control.latencyMs = savedLatency;
    for (const worker of workers) await worker.stop();
  }
}

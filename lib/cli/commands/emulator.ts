/** `emulator [--port N] [--seed S] ...`: the upstream emulator alone, with its URL and a demo token. */
import { UsageError } from '../../errors.ts';
import { type Command, untilAborted } from '../command.ts';

export const DEFAULT_EMULATOR_PORT = 8790;

function intOption(name: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'string' || !/^\d+$/.test(value))
    throw new UsageError(`--${name} must be a whole number`);
  return Number(value);
}

export const emulatorCommand: Command = {
  path: ['emulator'],
  example: 'exposure-alerts emulator --port 8790 --rate-limits real',
  optionHelp: {
    port: 'the port (default 8790; 0 for any free one)',
    seed: 'the dataset seed (default 42): the same seed, the same data',
    'latency-ms': 'added to every answer (default 0)',
    events: 'events per tenant (default 120)',
    'late-matches': 'per tenant, events of old content matched in the hours before the start (default 3)',
    credentials: 'leaked credentials in the store (default 400)',
    groups: 'identifier groups per tenant (default 2)',
    live: 'add a few new events every 20 s',
    'rate-limits':
      'real: the upstream limits (4 requests/s, 1 search/s per organization); off: none (default)',
    'basic-per-second': 'requests a second per organization on every endpoint (0: unlimited)',
    'search-per-second': 'global searches a second per organization (0: unlimited)',
    quota: 'global searches each organization has left this month (default 10000)',
  },
  service: true,
  // --late-matches: per tenant, events of years-old content matched in the hours before the start
  // (default 3, the dataset's); 0 leaves a feed of exactly --events, as benchmarks count them.
  // --rate-limits real: the upstream's per-organization limits, 4 requests/s on every endpoint and
  // 1 request/s on the global searches (429 RATELIMIT_REACHED past them); off (the default) is
  // unlimited. --basic-per-second / --search-per-second set one rate (0: unlimited), over the preset.
  // --quota N: global searches each organization has left this month (default 10000).
  // --groups N: identifier groups per tenant (default 2); past two, every tenth holds one of the
  // tenant's identifiers (a backlog), the others an identifier few events name (dataset.ts).
  usage:
    'emulator [--port N] [--seed S] [--latency-ms N] [--events N] [--late-matches N] [--credentials N] [--groups N] [--live] [--rate-limits real|off] [--basic-per-second N] [--search-per-second N] [--quota N]',
  summary: 'run the upstream emulator alone; prints its URL and a demo token',
  options: {
    port: { type: 'string' },
    seed: { type: 'string' },
    'latency-ms': { type: 'string' },
    events: { type: 'string' },
    'late-matches': { type: 'string' },
    credentials: { type: 'string' },
    groups: { type: 'string' },
    live: { type: 'boolean' },
    'rate-limits': { type: 'string' },
    'basic-per-second': { type: 'string' },
    'search-per-second': { type: 'string' },
    quota: { type: 'string' },
  },
  async run({ values, io, signal }) {
    const [{ MAX_GROUPS_PER_TENANT }, { REAL_RATE_LIMITS, startEmulator }] = await Promise.all([
      import('../../emulator/dataset.ts'),
      import('../../emulator/index.ts'),
    ]);
    const port = intOption('port', values.port, DEFAULT_EMULATOR_PORT);
    if (port > 65535) throw new UsageError('--port must be at most 65535');
    const seed = typeof values.seed === 'string' ? values.seed : '42';
    const groups = intOption('groups', values.groups, 2);
    if (groups > MAX_GROUPS_PER_TENANT)
      throw new UsageError(`--groups must be at most ${MAX_GROUPS_PER_TENANT}`);
    const preset = values['rate-limits'] ?? 'off';
    if (preset !== 'real' && preset !== 'off') throw new UsageError('--rate-limits must be real or off');
    const rates = preset === 'real' ? REAL_RATE_LIMITS : {};
    const running = await startEmulator({
      port,
      seed: /^\d+$/.test(seed) ? Number(seed) : seed,
      eventsPerTenant: intOption('events', values.events, 120),
      lateMatchesPerTenant: intOption('late-matches', values['late-matches'], 3),
      credentials: intOption('credentials', values.credentials, 400),
      groupsPerTenant: groups,
      globalSearchQuota: intOption('quota', values.quota, 10_000),
      rateLimits: {
        ...rates,
        ...(values['basic-per-second'] === undefined
          ? {}
          : { basicPerSecond: intOption('basic-per-second', values['basic-per-second'], 0) }),
        ...(values['search-per-second'] === undefined
          ? {}
          : { searchPerSecond: intOption('search-per-second', values['search-per-second'], 0) }),
      },
    });
    running.emulator.control.latencyMs = intOption('latency-ms', values['latency-ms'], 0);
    const stopLive = values.live ? running.emulator.startLiveEvents() : undefined;
    const [demo, ...others] = running.emulator.dataset.tenants;
    io.stdout(
      [
        `Upstream emulator listening on ${running.url} (seed ${seed})`,
        `  EXPOSURE_API_URL=${running.url}`,
        `  EXPOSURE_API_TOKEN=${demo?.token}    # tenant ${demo?.id} ${demo?.name}`,
        `  EXPOSURE_API_KEY=${demo?.apiKey}      # the same tenant, through POST /tokens/generate`,
        `  other tenants: ${others.map((t) => `${t.slug} (${t.token})`).join(', ')}`,
        `  knobs: ${running.url}/_emulator/info, /_emulator/faults, /_emulator/settings, /_emulator/requests, /_emulator/rate, /_emulator/quota`,
        'Ctrl-C stops it.',
        '',
      ].join('\n'),
    );
    await untilAborted(signal);
    stopLive?.();
    await running.close();
    return 0;
  },
};

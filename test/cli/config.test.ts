/** `config validate` and `config schema`, run through the real CLI dispatcher. */
import { spawnSync } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../infra/alerts-config.ts';
import { runCli } from '../../lib/cli/run.ts';
import { captureIo } from '../helpers/io.ts';

/** Runs the real CLI dispatcher with an in-memory Io. */
async function run(argv: string[], env: Record<string, string | undefined> = {}) {
  const io = captureIo(env);
  const code = await runCli(argv, io);
  return { code, out: io.out, err: io.err };
}

const valid = {
  sources: {
    tenantEvents: { enabled: true, filters: {}, lookback: 'PT24H', firstRun: 'alert' },
    identifierGroups: [{ id: 12, name: 'Executives' }],
    credentials: { domains: ['example.com'], lookback: 'P7D' },
  },
  destinations: {
    soc: { type: 'slack', url: { secret: 'socSlackWebhook' } },
    ciso: {
      type: 'email',
      provider: 'generic',
      url: 'https://mail.example.com/send',
      from: 'alerts@example.com',
      to: ['ciso@example.com'],
    },
    siem: { type: 'webhook', url: 'https://siem.example.com/in', signingSecret: { secret: 'siemKey' } },
    local: { type: 'console' },
  },
  routes: [
    { name: 'high-and-up', match: { kind: 'event', severity: { gte: 'high' } }, to: ['soc', 'siem'] },
    { name: 'vip', match: { tags: { any: ['vip'] } }, to: ['soc', 'ciso'] },
    { name: 'leaked-logins', match: { kind: 'credential', domains: ['example.com'] }, to: ['soc', 'local'] },
  ],
  silences: [{ match: { types: ['paste'] }, until: '2020-01-01T00:00:00Z', reason: 'old noise' }],
  passwords: 'masked',
  digest: { threshold: 5, maxItems: 20 },
};

let dir: string;
let cwd: string;
const file = async (name: string, content: unknown) => {
  const path = join(dir, name);
  await writeFile(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
};

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ea-config-'));
  cwd = process.cwd();
  process.chdir(dir);
});
afterAll(() => {
  process.chdir(cwd);
});

describe('config validate', () => {
  it('a valid config: OK line with counts, warnings on stderr, exit 0', async () => {
    const r = await run(['config', 'validate', await file('valid.json', valid)]);
    expect(r.code).toBe(0);
    expect(r.out).toBe('config OK: 3 routes, 4 destinations\n');
    expect(r.err).toContain(
      'warning: silences[0].until: 2020-01-01T00:00:00Z has passed; the silence is ignored',
    );
  });

  it('prints the path of every schema error, one per line, and exits 2', async () => {
    const broken = structuredClone(valid) as Record<string, unknown> & { routes: Record<string, unknown>[] };
    (broken.routes[1]!.match as Record<string, unknown>).colour = 'red';
    (broken.routes[0]!.match as Record<string, unknown>).severity = { gte: 'urgent' };
    broken.passwords = 'plain';
    const r = await run(['config', 'validate', await file('broken.json', broken)]);
    expect(r.code).toBe(2);
    const lines = r.err.split('\n');
    expect(lines).toContain('  routes[1].match.colour: unknown key');
    expect(lines.some((l) => l.startsWith('  routes[0].match.severity'))).toBe(true);
    expect(lines.some((l) => l.startsWith('  passwords: expected one of'))).toBe(true);
    expect(r.err).toMatch(/broken\.json is invalid \(3 errors\)/);
    expect(r.out).toBe('');
  });

  it('prints cross-reference errors with their paths', async () => {
    const broken = structuredClone(valid);
    broken.routes[0]!.to = ['nope', 'soc'];
    broken.routes[2]!.match = { kind: 'credential', sources: ['credentials:other.org'] } as never;
    const r = await run(['config', 'validate', await file('refs.json', broken)]);
    expect(r.code).toBe(2);
    expect(r.err).toContain('  routes[0].to[0]: no destination named "nope"\n');
    expect(r.err).toContain(
      '  routes[2].match.sources[0]: credentials:other.org is not a configured source\n',
    );
  });

  it('invalid JSON exits 2 naming the file', async () => {
    const r = await run(['config', 'validate', await file('bad.json', '{ "routes": [ }')]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/bad\.json is not valid JSON/);
  });

  it('a missing file exits 2 naming it', async () => {
    const r = await run(['config', 'validate', join(dir, 'missing.json')]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/cannot read .*missing\.json \(ENOENT\)/);
  });

  it('without a file, ALERTS_CONFIG or ./alerts.config.json: a usage error saying what to pass', async () => {
    const r = await run(['config', 'validate']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/pass a file .*ALERTS_CONFIG.*alerts\.config\.json/);
  });

  it('uses ALERTS_CONFIG when no file is given', async () => {
    const path = await file('from-env.json', { destinations: { local: { type: 'console' } }, routes: [] });
    const r = await run(['config', 'validate'], { ALERTS_CONFIG: path });
    expect(r.code).toBe(0);
    expect(r.out).toBe('config OK: 0 routes, 1 destination\n');
    expect(r.err).toContain('warning: destinations.local: no route sends to it');
  });

  it('falls back to ./alerts.config.json', async () => {
    await file('alerts.config.json', { destinations: { bad: { type: 'pager' } } });
    const r = await run(['config', 'validate']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/alerts\.config\.json is invalid/);
    expect(r.err).toContain('destinations.bad.type');
  });

  it('never prints a secret: only secret names are in a config, and none is needed', async () => {
    const r = await run(['config', 'validate', await file('valid2.json', valid)], {
      SECRETS_FILE: '/nonexistent',
    });
    expect(r.code).toBe(0);
  });
});

describe('config validate on a huge config', () => {
  it('200,000 bad routes: exit 2, the first 50 problems and a count of the rest (no stack overflow)', async () => {
    const routes = Array.from({ length: 200_000 }, (_, i) => ({
      name: `r${i}`,
      match: { colour: 'red' },
      to: ['nowhere'],
    }));
    const big = await file('huge.json', { destinations: { local: { type: 'console' } }, routes });
    const r = await run(['config', 'validate', big]);
    expect(r.code).toBe(2);
    const lines = r.err.trimEnd().split('\n');
    expect(lines[0]).toBe(`exposure-alerts: ${big} is invalid (400000 errors):`);
    expect(lines.slice(1, 3)).toEqual([
      '  routes[0].match.colour: unknown key',
      '  routes[1].match.colour: unknown key',
    ]);
    expect(lines).toHaveLength(52);
    expect(lines[51]).toBe('  … and 399950 more');
  }, 30_000);

  it('a run of a command on it fails the same way, listing 50 and counting the rest', async () => {
    const routes = Array.from({ length: 120_000 }, (_, i) => ({
      name: `r${i}`,
      to: ['nowhere'],
      stop: 'no',
    }));
    const big = await file('huge-run.json', { destinations: { local: { type: 'console' } }, routes });
    const r = await run(['deliveries', 'list'], {
      ALERTS_CONFIG: big,
      DYNAMODB_ENDPOINT: 'http://127.0.0.1:9',
      TABLE_NAME: 't',
    });
    expect(r.code).toBe(2);
    const lines = r.err.trimEnd().split('\n');
    expect(lines[0]).toMatch(/is invalid \(240000 problems\):$/);
    expect(lines).toHaveLength(52);
    expect(lines[51]).toBe('  … and 239950 more');
  }, 30_000);
});

describe('config schema', () => {
  it('config schema > alerts.schema.json, as the README says, leaves the checkout clean: git ignores it', () => {
    const ignored = spawnSync('git', ['check-ignore', '-q', 'alerts.schema.json'], { cwd: PROJECT_ROOT });
    expect(ignored.status).toBe(0);
  });

  it('prints the JSON Schema of the config as pretty JSON', async () => {
    const r = await run(['config', 'schema']);
    expect(r.code).toBe(0);
    const schema = JSON.parse(r.out);
    expect(schema.type).toBe('object');
    expect(Object.keys(schema.properties)).toEqual(
      expect.arrayContaining(['sources', 'destinations', 'routes', 'silences', 'passwords', 'digest']),
    );
    expect(schema.additionalProperties).toBe(false);
    expect(r.out).toContain('\n  "');
  });
});

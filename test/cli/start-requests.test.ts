/**
 * `npm start`'s terminal shows the alerts, not the API's requests (issue 47, item 3): as a process,
 * in a folder of its own, the API's request lines go to the file its banner names under `.data/`
 * (appended, the token never in it), and with LOG_LEVEL=debug they are printed with the rest.
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'vitest';
import { type CliProcess, spawnCliProcess } from '../helpers/cli-process.ts';

interface Started extends CliProcess {
  dir: string;
}

/** `npm start` (the installed command's `start`) in a folder of its own, once its banner is out. */
async function start(dir: string, env: Record<string, string> = {}): Promise<Started> {
  const started = spawnCliProcess(['start'], { cwd: dir, env: { PORT: '0', ...env } });
  await started
    .waitFor(() => started.out().includes('Ctrl-C stops it'), 8_000)
    .catch((error) => {
      started.child.kill('SIGKILL');
      throw error;
    });
  return { ...started, dir };
}

/** Asks the API of `s` what the console asks, with its demo token; returns the token. */
async function useApi(s: Started): Promise<string> {
  const api = /HTTP API:\s+(http:\/\/127\.0\.0\.1:\d+)/.exec(s.out())?.[1];
  const token = /Bearer (local-[0-9a-f]+)/.exec(s.out())?.[1] as string;
  const auth = { headers: { Authorization: `Bearer ${token}` } };
  for (const path of ['/health', '/status', '/alerts', '/whoami'])
    if (!(await fetch(`${api}${path}`, auth)).ok) throw new Error(`${path} failed`);
  return token;
}

const REQUEST_LINE = /"message":"request"|INFO\s+request|path=\/status/;

const fileLines = (file: string) =>
  existsSync(file) ? readFileSync(file, 'utf8').trimEnd().split('\n').filter(Boolean) : [];

// At once: two starts in folders of their own. Each is ended by SIGKILL once seen: its first cycles
// are not what is tested, and a clean stop waits for them.
describe.concurrent('npm start and the API’s requests', () => {
  it('go to .data/requests.log, named in the banner, not to the terminal', async ({ expect }) => {
    // A line an earlier run left: kept.
    const dir = await mkdtemp(join(tmpdir(), 'ea-requests-'));
    await mkdir(join(dir, '.data'));
    const earlier = JSON.stringify({ message: 'request', path: '/earlier', status: 200 });
    const file = join(dir, '.data', 'requests.log');
    await writeFile(file, `${earlier}\n`);
    const s = await start(dir);
    try {
      const token = await useApi(s);
      await s.waitFor(() => fileLines(file).length >= 5, 3_000);
      expect(s.out()).toMatch(/\n {2}Request log: {10}\.data\/requests\.log {2}\(the API's requests/);
      expect(s.out().match(/requests\.log/g)).toHaveLength(1);
      expect(s.out()).not.toMatch(REQUEST_LINE);
      expect(s.err()).not.toMatch(REQUEST_LINE);
      const logged = fileLines(file).map(
        (l) => JSON.parse(l) as { message: string; path: string; status: number },
      );
      expect(logged.map((l) => [l.message, l.path, l.status])).toEqual([
        ['request', '/earlier', 200],
        ['request', '/health', 200],
        ['request', '/status', 200],
        ['request', '/alerts', 200],
        ['request', '/whoami', 200],
      ]);
      expect(fileLines(file).join('\n')).not.toContain(token);
    } finally {
      s.child.kill('SIGKILL');
    }
  }, 10_000);

  it('with LOG_LEVEL=debug, are printed with the rest of the log', async ({ expect }) => {
    const dir = await mkdtemp(join(tmpdir(), 'ea-requests-'));
    const s = await start(dir, { LOG_LEVEL: 'debug' });
    try {
      await useApi(s);
      await s.waitFor(() => /"message":"request".*"path":"\/whoami"/.test(s.out()), 3_000);
      expect(s.out()).toMatch(/"message":"request".*"path":"\/status"/);
      expect(s.out()).not.toContain('requests.log');
      expect(existsSync(join(dir, '.data', 'requests.log'))).toBe(false);
    } finally {
      s.child.kill('SIGKILL');
    }
  }, 10_000);
});

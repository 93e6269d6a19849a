/**
 * A destination's URL kept in the secret object is checked at start, as a URL written in the config
 * is checked by its schema: `start`, a worker's cold start and `config validate --secrets` refuse a
 * secret that is not an absolute http(s) URL, naming the destination and the secret's name, and
 * never showing its value (it is a secret).
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { createWorkerHandler } from '../../functions/worker.ts';
import { runCli } from '../../lib/cli/run.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { captureIo } from '../helpers/io.ts';

const emu = useEmulator({ eventsPerTenant: 1, lateMatchesPerTenant: 0, credentials: 0 });

/** Values no test output may hold: each looks like a credential, none like a URL. */
const VALUES = {
  siemUrl: 'hooks.example.test/T0Zq7vX/B0Zq7vX/k3yZq7vX',
  socWebhook: 'xoxb-0000-not-a-url-Zq7vX',
  chatUrl: 'https://chat.example.test/hooks/fine',
};

const config = {
  sources: { tenantEvents: { enabled: true } },
  destinations: {
    siem: { type: 'webhook', url: { secret: 'siemUrl' } },
    soc: { type: 'slack', url: { secret: 'socWebhook' } },
    chat: { type: 'mattermost', url: { secret: 'chatUrl' } },
  },
  routes: [{ name: 'all', to: ['siem', 'soc', 'chat'] }],
};

async function files() {
  const dir = process.cwd();
  const configFile = join(dir, 'url-secret.config.json');
  const secretsFile = join(dir, 'url-secret.secrets.json');
  await writeFile(configFile, JSON.stringify(config));
  await writeFile(secretsFile, JSON.stringify({ apiToken: 'emu-acme-token', ...VALUES }));
  return { ALERTS_CONFIG: configFile, SECRETS_FILE: secretsFile };
}

const PROBLEMS = [
  'destinations.siem.url: secret "siemUrl" is not an absolute http(s) URL',
  'destinations.soc.url: secret "socWebhook" is not an absolute http(s) URL',
];

function expectNamedNotShown(text: string) {
  for (const problem of PROBLEMS) expect(text).toContain(problem);
  expect(text).not.toContain('chatUrl');
  expect(text).not.toContain('Zq7vX');
  expect(text).not.toContain('not-a-url');
}

describe('a destination URL secret that is not a URL', () => {
  // Before the check, start ran on (until the test's timeout).
  it('start exits 2 naming each destination and secret, not its value', { timeout: 10_000 }, async () => {
    const io = captureIo({ ...(await files()), EXPOSURE_API_URL: emu.url, PORT: '0' });
    expect(await runCli(['start'], io)).toBe(2);
    expect(io.err).toContain('2 destination secrets are not a URL:');
    expectNamedNotShown(io.err + io.out);
  });

  it('a worker’s cold start fails the same way', async () => {
    const saved = { ...process.env };
    const lines: string[] = [];
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
      lines.push(String(chunk));
      return true;
    });
    Object.assign(process.env, await files(), {
      EXPOSURE_API_URL: emu.url,
      TABLE_NAME: 'url-secret',
      LOG_LEVEL: 'error',
    });
    let message = '';
    try {
      await createWorkerHandler('events').catch((error: Error) => {
        message = `${error.message} ${JSON.stringify(error)}`;
      });
    } finally {
      spy.mockRestore();
      process.env = saved;
    }
    expectNamedNotShown(message);
    const logged = lines.map((l) => (JSON.parse(l) as { message: string }).message).join('\n');
    expectNamedNotShown(logged);
    expect(lines.join('')).not.toContain('Zq7vX');
  });

  it('config validate --secrets names them too, and passes once they are URLs', async () => {
    const env = await files();
    const io = captureIo(env);
    expect(await runCli(['config', 'validate', '--secrets', env.ALERTS_CONFIG], io)).toBe(2);
    expectNamedNotShown(io.err + io.out);
    await writeFile(
      env.SECRETS_FILE,
      JSON.stringify({
        ...VALUES,
        siemUrl: 'https://siem.example.test/in',
        socWebhook: 'https://hooks.slack.com/x',
      }),
    );
    const fixed = captureIo(env);
    expect(await runCli(['config', 'validate', '--secrets', env.ALERTS_CONFIG], fixed)).toBe(0);
  });
});

/**
 * A heartbeat URL kept as a secret never shows, through the real CLI as a process with
 * `LOG_LEVEL=debug`: a value that is not an `https://` or `http://` URL (one ending in `/`, whose
 * trimmed form the redactor once missed) stops the run at start with exit 2, naming the path and
 * the secret, not the value; a good one (with a trailing `/`) pings the stand-in receiver, and no
 * form of it is in anything the process printed.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createLogger, Redactor } from '../../lib/log.ts';
import { runCliProcess } from '../helpers/cli-process.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { startHeartbeat } from '../helpers/heartbeat.ts';

const emu = useEmulator({ eventsPerTenant: 3, lateMatchesPerTenant: 0, credentials: 10 });
const db = useDynalite();

/** `poll events --once` with the events heartbeat in the secret `eventsBeat`, logging at debug. */
async function pollWithBeat(beat: string) {
  const dir = await mkdtemp(join(tmpdir(), 'ea-beat-secret-'));
  const config = join(dir, 'alerts.config.json');
  const secrets = join(dir, 'secrets.json');
  await writeFile(
    config,
    JSON.stringify({
      sources: { tenantEvents: { lookback: 'P7D' } },
      destinations: { terminal: { type: 'console' } },
      routes: [{ name: 'all', to: ['terminal'] }],
      heartbeat: { events: { secret: 'eventsBeat' } },
    }),
  );
  await writeFile(secrets, JSON.stringify({ eventsBeat: beat }));
  return runCliProcess(['poll', 'events', '--once'], {
    env: {
      ALERTS_CONFIG: config,
      SECRETS_FILE: secrets,
      LOG_LEVEL: 'debug',
      EXPOSURE_API_URL: emu.url,
      EXPOSURE_API_TOKEN: 'emu-acme-token',
      TABLE_NAME: await db.table(),
      DYNAMODB_ENDPOINT: db.endpoint,
    },
  });
}

describe('a heartbeat secret', () => {
  it('that is not a URL and ends in /: exit 2 at start, naming the secret, its value nowhere', async () => {
    const value = 'beat-token-7f3a9c2e/';
    const r = await pollWithBeat(value);
    const output = r.out + r.err;
    expect(r.code, output).toBe(2);
    expect(r.err).toContain('heartbeat.events (secret "eventsBeat"): expected an https:// or http:// URL');
    expect(output).not.toContain('beat-token-7f3a9c2e');
  }, 20_000);

  it('a good URL with a trailing /: pinged, and no form of it in anything printed', async () => {
    const receiver = await startHeartbeat();
    try {
      const r = await pollWithBeat(`${receiver.url}/`);
      const output = r.out + r.err;
      expect(r.code, output).toBe(0);
      expect(receiver.pings.map((p) => p.kind)).toEqual(['start', 'success']);
      expect(output).toContain('heartbeat ping sent');
      const check = new URL(receiver.url).pathname.slice(1);
      expect(output).not.toContain(check);
    } finally {
      await receiver.close();
    }
  }, 20_000);
});

describe('the redactor', () => {
  it('hides every form of a secret a line may carry', () => {
    const redactor = new Redactor();
    const lines: string[] = [];
    const log = createLogger({ level: 'debug', redactor, write: (l) => lines.push(l) });
    redactor.add('beat-token-7f3a9c2e/');
    redactor.add(' https://HC.example/ping/abc-123/ ');
    redactor.add('quote"back\\slash');
    log.debug('ping failed', { error: 'Failed to parse URL from beat-token-7f3a9c2e' });
    log.debug('ping', { url: 'https://hc.example/ping/abc-123/start' });
    log.debug('odd', { value: 'quote"back\\slash' });
    const text = lines.join('\n');
    for (const part of ['beat-token-7f3a9c2e', 'ping/abc-123', 'quote', 'back'])
      expect(text).not.toContain(part);
    expect(text.match(/\[redacted\]/g)).toHaveLength(3);
  });

  it('hides a longer secret whole, even when a shorter one is inside it', () => {
    const redactor = new Redactor();
    redactor.add('abcd');
    redactor.add('abcdefgh-secret');
    expect(redactor.redact('x abcdefgh-secret y abcd')).toBe('x [redacted] y [redacted]');
  });
});

/**
 * `serve` as a process of its own (the built command), against a real emulator and dynalite: it
 * reads the alert config (ALERTS_CONFIG) for what concerns the API, so Slack's signed requests
 * reach its `actions.slack` doors; and a body sent in chunks, with no Content-Length, is refused
 * at its bound without the server reading the rest of it.
 */
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../lib/api/auth.ts';
import type { EventItem } from '../../lib/upstream/schemas.ts';
import { type CliService, runCliProcess, startCliService } from '../helpers/cli-process.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { slackSigned } from '../helpers/slack-api.ts';

const emu = useEmulator({ eventsPerTenant: 3, lateMatchesPerTenant: 0, credentials: 0 });
const dynamo = useDynalite();
const SECRET = 'slack-signing-secret-for-serve';
const TEAM = 'T0TEAM01';
const ANA = 'U0ANA001';
const token = randomBytes(24).toString('base64url');
let service: CliService;
let dir: string;
let env: Record<string, string>;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ea-serve-'));
  const config = join(dir, 'alerts.config.json');
  await writeFile(
    config,
    JSON.stringify({
      sources: { tenantEvents: { lookback: 'P30D' } },
      // Its secret is not in the secret object: serve sends nothing, so it starts without it.
      destinations: { chat: { type: 'slack', url: { secret: 'chatHookNotGiven' } } },
      routes: [{ name: 'all', to: ['chat'] }],
      actions: {
        slack: { signingSecret: { secret: 'slackSigning' }, teamId: TEAM, allowedUsers: [ANA] },
      },
    }),
  );
  const secrets = join(dir, 'secrets.json');
  await writeFile(
    secrets,
    JSON.stringify({ apiClients: { runbook: sha256Hex(token) }, slackSigning: SECRET }),
  );
  env = {
    EXPOSURE_API_URL: emu.url,
    EXPOSURE_API_TOKEN: 'emu-acme-token',
    DYNAMODB_ENDPOINT: dynamo.endpoint,
    TABLE_NAME: await dynamo.table(),
    PORT: '0',
    SECRETS_FILE: secrets,
    ALERTS_CONFIG: config,
    LOG_LEVEL: 'error',
  };
  service = await startCliService(['serve'], { cwd: dir, env });
});

afterAll(async () => {
  expect(await service?.stop()).toBe(0);
  expect(service.out() + service.err()).not.toContain(SECRET);
});

const post = (path: string, body: string, headers: Record<string, string>) =>
  fetch(`${service.url}${path}`, { method: 'POST', headers, body });

describe('serve with an alert config', () => {
  it('names the console in its banner, and serves it there', async () => {
    expect(service.out()).toContain(`${service.url}/console`);
    const page = await fetch(`${service.url}/console`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
  });

  it("answers Slack's signed requests at the doors actions.slack opens, and acts", async () => {
    const command = `team_id=${TEAM}&user_id=${ANA}&command=%2Fexposure&text=help`;
    const help = await post('/slack/commands', command, slackSigned(command, SECRET));
    expect(help.status).toBe(200);
    expect(await help.json()).toMatchObject({
      response_type: 'ephemeral',
      text: expect.stringContaining('lookup'),
    });

    const [event] = emu.running.emulator.dataset.tenant('acme').events;
    if (!event) throw new Error('the emulator has no event');
    const uid = (event.item as unknown as EventItem).metadata.uid;
    const click = `payload=${encodeURIComponent(
      JSON.stringify({
        type: 'block_actions',
        user: { id: ANA },
        team: { id: TEAM },
        actions: [
          {
            action_id: 'exposure:ignore',
            block_id: `exposure:${uid}`,
            value: uid,
            action_ts: '1716999999.1',
          },
        ],
      }),
    )}`;
    const clicked = await post('/slack/interactions', click, slackSigned(click, SECRET));
    expect(clicked.status).toBe(200);
    expect(await clicked.text()).toBe('');
    // The work after Slack's answer is done by serve itself.
    for (let i = 0; i < 100 && !event.isIgnored; i++) await new Promise((r) => setTimeout(r, 50));
    expect(event.isIgnored).toBe(true);

    const forged = await post('/slack/interactions', click, slackSigned(click, 'not-the-secret'));
    expect(forged.status).toBe(401);
  });

  it('a config whose signing secret is not in the secret object stops serve, naming it', async () => {
    const secrets = join(dir, 'no-signing.json');
    await writeFile(secrets, JSON.stringify({ apiClients: { runbook: sha256Hex(token) } }));
    const run = await runCliProcess(['serve'], { cwd: dir, env: { ...env, SECRETS_FILE: secrets } });
    expect(run.code).not.toBe(0);
    expect(run.err).toMatch(/actions\.slack\.signingSecret.*slackSigning/);
  });
});

/**
 * POSTs `total` bytes in chunks of 32 KiB, one a millisecond (no Content-Length: chunked
 * encoding), until the answer arrives; counts the bytes written by then. Paced, so what is counted
 * is what the server let through before answering, not what the sockets' buffers hold.
 */
function sendChunked(
  url: string,
  headers: Record<string, string>,
  total: number,
): Promise<{ status: number; written: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers });
    let written = 0;
    let answered = false;
    const answer = new Promise<void>((answeredNow) => {
      req.on('response', (res) => {
        answered = true;
        answeredNow();
        const at = written;
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d) => {
          body += d;
        });
        res.on('end', () => {
          resolve({ status: res.statusCode ?? 0, written: at, body });
          req.destroy();
        });
      });
    });
    req.on('error', (error) => {
      if (!answered) reject(error);
    });
    const piece = Buffer.alloc(32 * 1024, 'a');
    void (async () => {
      while (!answered && written < total) {
        const more = req.write(piece);
        written += piece.length;
        if (!more) await Promise.race([once(req, 'drain'), answer]);
        await new Promise((r) => setTimeout(r, 1));
      }
      if (!answered) req.end();
    })();
  });
}

describe('a body sent in chunks, with no Content-Length', () => {
  const TOTAL = 16 * 1024 * 1024;
  const form = { 'Content-Type': 'application/x-www-form-urlencoded' };
  const json = { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` };

  it.each([
    ['/slack/interactions', form, 64 * 1024],
    ['/slack/commands', form, 64 * 1024],
    ['/silences', json, 16 * 1024],
    ['/events/actions', json, 16 * 1024],
  ])(
    '%s: 413 at its bound, before the client could send an eighth of 16 MB',
    async (path, headers, bound) => {
      const res = await sendChunked(`${service.url}${path}`, headers, TOTAL);
      expect(res.status).toBe(413);
      expect(JSON.parse(res.body).error).toMatchObject({
        code: 'payload_too_large',
        message: expect.stringContaining(String(bound)),
      });
      expect(res.written).toBeLessThan(TOTAL / 8);
      // And serve goes on answering.
      expect((await fetch(`${service.url}/health`)).status).toBe(200);
    },
  );
});

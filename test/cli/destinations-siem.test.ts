/**
 * The SIEM and Discord destinations through the CLI (in process, real stand-ins over HTTP):
 * `destinations test` sends each one its marked test message and says how it went; `preview`
 * names each one without a secret and shows the exact payload, with no password.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../lib/cli/run.ts';
import { TEST_MARK } from '../../lib/render/notice.ts';
import { DISCORD_TOKEN, type DiscordStandIn, startDiscord } from '../helpers/discord.ts';
import { captureIo } from '../helpers/io.ts';
import { SENTINEL_APP, type SentinelStandIn, startSentinel } from '../helpers/sentinel.ts';
import { HEC_TOKEN, type HecStandIn, startHec } from '../helpers/splunk.ts';

let discord: DiscordStandIn;
let hec: HecStandIn;
let sentinel: SentinelStandIn;
let dir: string;
let env: Record<string, string>;

beforeAll(async () => {
  [discord, hec, sentinel] = await Promise.all([startDiscord(), startHec(), startSentinel()]);
  dir = await mkdtemp(join(tmpdir(), 'ea-siem-'));
  await writeFile(
    join(dir, 'alerts.config.json'),
    JSON.stringify({
      destinations: {
        chat: { type: 'discord', url: { secret: 'discordUrl' } },
        hec: { type: 'splunk', url: hec.url, token: { secret: 'hec' } },
        logs: {
          type: 'sentinel',
          tenantId: SENTINEL_APP.tenantId,
          clientId: SENTINEL_APP.clientId,
          clientSecret: { secret: 'entra' },
          endpoint: sentinel.url,
          ruleId: 'dcr-0001',
          stream: 'Custom-ExposureAlerts_CL',
          loginUrl: sentinel.url,
        },
      },
      routes: [{ name: 'all', to: ['chat', 'hec', 'logs'] }],
      passwords: 'masked',
    }),
  );
  await writeFile(
    join(dir, 'secrets.json'),
    JSON.stringify({ discordUrl: discord.url, hec: HEC_TOKEN, entra: SENTINEL_APP.clientSecret }),
  );
  env = { ALERTS_CONFIG: join(dir, 'alerts.config.json'), SECRETS_FILE: join(dir, 'secrets.json') };
});
afterAll(() => Promise.all([discord.close(), hec.close(), sentinel.close()]));

describe('destinations test', () => {
  it('Discord, Splunk and Sentinel each get the marked test message, each said ok', async () => {
    const io = captureIo(env);
    expect(await runCli(['destinations', 'test'], io)).toBe(0);
    expect(io.out).toContain('chat (discord): ok (HTTP 204)');
    expect(io.out).toContain('hec (splunk): ok (HTTP 200)');
    expect(io.out).toContain('logs (sentinel): ok (HTTP 204)');
    expect(discord.posted[0]?.embeds[0]?.title.replace(/\\(.)/g, '$1')).toContain(TEST_MARK);
    expect(discord.posted[0]?.allowed_mentions).toEqual({ parse: [] });
    expect(hec.events[0]?.event).toMatchObject({ kind: 'test' });
    expect(sentinel.records[0]).toMatchObject({ Kind: 'test' });
    const said = io.out + io.err;
    for (const secret of [DISCORD_TOKEN, HEC_TOKEN, SENTINEL_APP.clientSecret])
      expect(said).not.toContain(secret);
  });

  it('a revoked Discord webhook: said as Discord said it, exit 1', async () => {
    await writeFile(
      join(dir, 'revoked.json'),
      JSON.stringify({
        discordUrl: discord.url.replace(DISCORD_TOKEN, 'revoked'),
        hec: HEC_TOKEN,
        entra: 'x',
      }),
    );
    const io = captureIo({ ...env, SECRETS_FILE: join(dir, 'revoked.json') });
    expect(await runCli(['destinations', 'test', 'chat'], io)).toBe(1);
    expect(io.out).toContain('chat (discord): FAILED, HTTP 401');
    expect(io.out).toContain('Invalid Webhook Token');
  });
});

describe('preview', () => {
  it('names each destination without its secret and shows the payload, without the password', async () => {
    const credential = {
      id: 4242,
      identity_name: 'jane.doe@mail.example.com',
      domain: 'mail.example.com',
      hash: 'Correct-Horse-9',
      hash_type: 'plaintext',
      imported_at: '2026-11-20T08:00:00+00:00',
      source_id: 'combo-1',
      source: { id: 'combo-1', name: 'Combo list 1', breached_at: null, leaked_at: null },
    };
    await writeFile(join(dir, 'cred.json'), JSON.stringify(credential));
    const io = captureIo(env);
    expect(await runCli(['preview', join(dir, 'cred.json')], io)).toBe(0);
    expect(io.out).toContain('POST to the Discord webhook (its URL holds its token, not shown)');
    expect(io.out).toContain('Splunk HEC: POST');
    expect(io.out).toContain('Microsoft Sentinel: POST');
    expect(io.out).toContain('"allowed_mentions"');
    expect(io.out).toContain('C*************9');
    expect(io.out).not.toContain('Correct-Horse-9');
    for (const secret of [DISCORD_TOKEN, HEC_TOKEN, SENTINEL_APP.clientSecret])
      expect(io.out).not.toContain(secret);
  });
});

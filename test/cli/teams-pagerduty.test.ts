/**
 * Teams and PagerDuty wherever a destination type shows up in the CLI, through the real dispatcher:
 * `config validate` renders the samples through them, `config schema` knows both, `preview`
 * prints the card and the event (the routing key named, never shown), and `destinations test`
 * sends a marked test card, and to PagerDuty a trigger then a resolve with the same dedup_key,
 * so no incident stays open. Real local stand-ins for both services.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../lib/cli/run.ts';
import { TEST_MARK } from '../../lib/render/notice.ts';
import { sampleHostileEvent } from '../../lib/render/samples.ts';
import { captureIo } from '../helpers/io.ts';
import { TEST_ROUTING_KEY, usePagerDutyReceivers } from '../helpers/pagerduty-receiver.ts';
import { useTeamsReceivers } from '../helpers/teams-receiver.ts';

const teamsReceiver = useTeamsReceivers();
const pagerduty = usePagerDutyReceivers();

async function cli(args: string[], env: Record<string, string | undefined> = {}) {
  const io = captureIo(env);
  const code = await runCli(args, io);
  return { code, out: io.out, err: io.err };
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ea-teams-pd-'));
});

async function write(name: string, content: unknown) {
  const path = join(dir, name);
  await writeFile(path, JSON.stringify(content));
  return path;
}

function config(pdUrl: string) {
  return {
    sources: { tenantEvents: { enabled: true } },
    destinations: {
      socTeams: { type: 'teams', url: { secret: 'socTeamsWebhook' } },
      pager: {
        type: 'pagerduty',
        routingKey: { secret: 'pagerKey' },
        url: pdUrl,
        credentialSeverity: 'warning',
      },
    },
    routes: [{ name: 'all', match: {}, to: ['socTeams', 'pager'] }],
  };
}

describe('config', () => {
  it('validate renders the normal, hostile and credential samples and a digest through both', async () => {
    const path = await write('ok.json', config('https://events.pagerduty.com/v2/enqueue'));
    const r = await cli(['config', 'validate', path]);
    expect(r.err).toBe('');
    expect(r.out).toBe('config OK: 1 route, 2 destinations\n');
  });

  it('validate names a bad key or value of either', async () => {
    const path = await write('bad.json', {
      destinations: {
        t: { type: 'teams', url: 'not a url' },
        p: { type: 'pagerduty', routingKey: { secret: 'k' }, credentialSeverity: 'high', colour: 1 },
      },
    });
    const r = await cli(['config', 'validate', path]);
    expect(r.code).toBe(2);
    expect(r.err).toContain('destinations.t.url');
    expect(r.err).toContain('destinations.p.credentialSeverity');
    expect(r.err).toContain('destinations.p.colour');
  });

  it('validate warns about a retired connector URL, and about a Workflows URL written in the config', async () => {
    const path = await write('urls.json', {
      destinations: {
        old: { type: 'teams', url: 'https://acme.webhook.office.com/webhookb2/abc@def/IncomingWebhook/x/y' },
        plain: { type: 'teams', url: 'https://prod.environment.api.powerplatform.com/workflows/x?sig=abc' },
      },
      routes: [{ name: 'all', to: ['old', 'plain'] }],
    });
    const r = await cli(['config', 'validate', path]);
    expect(r.code).toBe(0);
    expect(r.err).toContain(
      'warning: destinations.old.url: an Office 365 connector URL; connectors are retired',
    );
    expect(r.err).toContain('warning: destinations.plain.url: a Workflows URL carries its signature (sig=)');
  });

  it('schema lists both types with their keys', async () => {
    const r = await cli(['config', 'schema']);
    const text = r.out;
    expect(text).toContain('"teams"');
    expect(text).toContain('"pagerduty"');
    expect(text).toContain('"routingKey"');
    expect(text).toContain('"credentialSeverity"');
  });
});

describe('preview', () => {
  it('prints the Teams card and the PagerDuty event for the hostile sample, no secret shown', async () => {
    const env = {
      ALERTS_CONFIG: await write('preview.json', config('https://pd.example.test/v2/enqueue')),
    };
    const r = await cli(['preview', await write('hostile.json', sampleHostileEvent(new Date()))], env);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain('=== socTeams (teams) · routes: all ===');
    expect(r.out).toContain('POST to the Teams Workflows webhook (its URL is a credential, not shown)');
    expect(r.out).toContain('"contentType": "application/vnd.microsoft.card.adaptive"');
    expect(r.out).toContain('"text": "# heading [click](https://evil) **bold** <at>everyone</at> "');
    expect(r.out).toContain('=== pager (pagerduty) · routes: all ===');
    expect(r.out).toContain('PagerDuty Events API v2: POST https://pd.example.test/v2/enqueue');
    expect(r.out).toContain('"routing_key": "<secret pagerKey>"');
    expect(r.out).toContain('"dedup_key": "event:paste/pastebin/<!channel>/x"');
    expect(r.out).toContain('"severity": "critical"');
  });
});

describe('destinations test', () => {
  it('Teams gets a marked test card; PagerDuty a trigger then a resolve with the same dedup_key', async () => {
    const teams = await teamsReceiver();
    const pd = await pagerduty();
    const env = {
      ALERTS_CONFIG: await write('test.json', config(pd.url)),
      SECRETS_FILE: await write('secrets.json', { socTeamsWebhook: teams.url, pagerKey: TEST_ROUTING_KEY }),
    };
    const r = await cli(['destinations', 'test'], env);
    expect(r.code, r.out + r.err).toBe(0);
    expect(r.out).toBe(
      'socTeams (teams): ok (HTTP 202)\npager (pagerduty): ok (HTTP 202)\npager (pagerduty): resolve ok (HTTP 202)\n',
    );
    expect(teams.failedRuns).toEqual([]);
    expect(JSON.stringify(teams.posted[0]?.card)).toContain(TEST_MARK);
    expect(pd.requests.map((q) => q.event?.event_action)).toEqual(['trigger', 'resolve']);
    expect(pd.requests[0]?.event?.dedup_key).toBe(pd.requests[1]?.event?.dedup_key);
    const payload = pd.requests[0]?.event?.payload as { summary?: string } | undefined;
    expect(String(payload?.summary)).toContain(TEST_MARK);
    // Nothing stays open on the on-call's board.
    expect(pd.alerts).toHaveLength(1);
    expect(pd.alerts[0]?.open).toBe(false);
    expect(r.out + r.err).not.toContain(TEST_ROUTING_KEY);
  });

  it('a PagerDuty refusal is said once, with its errors, and nothing is resolved', async () => {
    const teams = await teamsReceiver();
    const pd = await pagerduty();
    const env = {
      ALERTS_CONFIG: await write('test2.json', config(pd.url)),
      SECRETS_FILE: await write('secrets2.json', { socTeamsWebhook: teams.url, pagerKey: 'short' }),
    };
    const r = await cli(['destinations', 'test', 'pager'], env);
    expect(r.code).toBe(1);
    expect(r.out).toBe(
      "pager (pagerduty): FAILED, HTTP 400 invalid event: Event object is invalid; errors: 'routing_key' must be a 32-character string (refused: fix the destination)\n",
    );
    expect(pd.requests).toHaveLength(1);
  });
});

/** `preview <file>`: validation, routing, silences and the exact payload per destination. */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { itemKind } from '../../lib/cli/commands/preview.ts';
import { runCli } from '../../lib/cli/run.ts';
import { webhookIdempotencyKey } from '../../lib/render/keys.ts';
import { captureIo } from '../helpers/io.ts';

/** Runs `preview` through the real CLI dispatcher with an in-memory Io. */
async function preview(args: string[], env: Record<string, string | undefined> = {}) {
  const io = captureIo(env);
  const code = await runCli(['preview', ...args], io);
  return { code, out: io.out, err: io.err };
}

const event = {
  metadata: {
    estimated_created_at: '2026-11-20T10:00:00Z',
    matched_at: '2026-11-20T10:05:00Z',
    type: 'forum_post',
    uid: 'forum_post/darkforum/thread/12/post/3',
    severity: 'high',
  },
  tenant_metadata: { severity: { original: 'high' }, tags: ['vip'], notes: '' },
  identifiers: [{ id: 12, name: 'acme.test' }],
  highlights: { content: ['selling <mark>acme.test</mark> VPN access <!channel>'] },
};

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

const config = {
  sources: { tenantEvents: { enabled: true }, credentials: { domains: ['example.com'] } },
  destinations: {
    soc: { type: 'slack', url: { secret: 'socSlackWebhook' } },
    ciso: {
      type: 'email',
      provider: 'generic',
      url: 'https://mail.example.com/send?token=abc',
      from: 'alerts@example.com',
      to: ['ciso@example.com'],
    },
    siem: {
      type: 'webhook',
      url: 'https://siem.example.com/in',
      signingSecret: { secret: 'siemKey' },
      headers: { 'X-Tenant': 'acme', Authorization: 'Bearer literal-token-value' },
    },
  },
  routes: [
    { name: 'high-and-up', match: { kind: 'event', severity: { gte: 'high' } }, to: ['soc', 'siem'] },
    { name: 'vip', match: { tags: { any: ['vip'] } }, to: ['soc', 'ciso'] },
    { name: 'logins', match: { kind: 'credential', domains: ['example.com'] }, to: ['siem'] },
  ],
  silences: [
    {
      name: 'paste-noise',
      match: { types: ['paste'] },
      until: '2999-01-01T00:00:00Z',
      reason: 'paste noise',
    },
  ],
  passwords: 'hidden',
};

let dir: string;
let cwd: string;
const file = async (name: string, content: unknown) => {
  const path = join(dir, name);
  await writeFile(path, JSON.stringify(content));
  return path;
};

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ea-preview-'));
  cwd = process.cwd();
  process.chdir(dir); // no alerts.config.json here: the demo config applies unless ALERTS_CONFIG is set
});
afterAll(() => {
  process.chdir(cwd);
});

describe('itemKind', () => {
  it('tells events from credentials', () => {
    expect(itemKind(event)).toBe('event');
    expect(itemKind(credential)).toBe('credential');
    expect(itemKind({ id: 1 })).toBeUndefined();
    expect(itemKind([event])).toBeUndefined();
  });
});

describe('preview with the demo config', () => {
  it('an event goes to the terminal through the everything route, shown as console text', async () => {
    const r = await preview([await file('event.json', event)]);
    expect(r.code).toBe(0);
    expect(r.out).toContain('config: built-in demo config');
    expect(r.out).toContain('=== terminal (console) · routes: everything ===');
    expect(r.out).toContain('[HIGH]  forum_post  acme.test  #vip');
    expect(r.out).toContain('selling *acme.test* VPN access <!channel>');
    expect(r.out).toContain('https://app.flare.io/#/forum_post/darkforum/thread%2F12%2Fpost%2F3');
  });

  it('a credential is masked per the demo policy before anything sees it', async () => {
    const r = await preview([await file('cred.json', credential)]);
    expect(r.code).toBe(0);
    expect(r.out).toContain('from source credentials:example.com');
    expect(r.out).toContain('jane.doe@mail.example.com  C*************9  (plaintext)');
    expect(r.out).not.toContain('Correct-Horse-9');
  });

  it('uses EXPOSURE_APP_URL for links', async () => {
    const r = await preview([await file('event2.json', event)], {
      EXPOSURE_APP_URL: 'https://flare.internal.test',
    });
    expect(r.out).toContain('https://flare.internal.test/#/forum_post/darkforum/thread%2F12%2Fpost%2F3');
  });
});

describe('preview with a config', () => {
  it('prints each chosen destination with its routes and exactly what it would receive', async () => {
    const env = { ALERTS_CONFIG: await file('config.json', config) };
    const r = await preview([await file('event3.json', event)], env);
    expect(r.code).toBe(0);
    expect(r.out).toContain('=== soc (slack) · routes: high-and-up, vip ===');
    expect(r.out).toContain('=== siem (webhook) · routes: high-and-up ===');
    expect(r.out).toContain('=== ciso (email) · routes: vip ===');
    expect(r.out.indexOf('=== soc')).toBeLessThan(r.out.indexOf('=== siem'));
    expect(r.out.indexOf('=== siem')).toBeLessThan(r.out.indexOf('=== ciso'));

    // Slack: the JSON payload, escaped.
    const slack = r.out.slice(r.out.indexOf('=== soc'), r.out.indexOf('=== siem'));
    const json = JSON.parse(slack.slice(slack.indexOf('{'), slack.lastIndexOf('}') + 1));
    expect(json.blocks.length).toBeGreaterThan(0);
    expect(JSON.stringify(json)).toContain('&lt;!channel&gt;');

    // Webhook: headers (signature described, not computed), then the exact body.
    const siem = r.out.slice(r.out.indexOf('=== siem'), r.out.indexOf('=== ciso'));
    expect(siem).toContain('POST https://siem.example.com/in');
    expect(siem).toContain('Content-Type: application/json');
    expect(siem).toContain(
      `Idempotency-Key: ${webhookIdempotencyKey('siem', [`siem~event~${event.metadata.uid}`])}`,
    );
    expect(siem).toContain('X-Signature-Timestamp: <unix seconds at send time>');
    expect(siem).toMatch(
      /X-Signature-256: sha256=<HMAC-SHA256 of .* with <secret siemKey>, computed at send time>/,
    );
    expect(siem).toContain('X-Tenant: acme');
    expect(siem).toContain('Authorization: <hidden>');
    const body = JSON.parse(siem.slice(siem.indexOf('\n{'), siem.lastIndexOf('}') + 1));
    expect(body).toMatchObject({
      version: 1,
      kind: 'events',
      destination: 'siem',
      routes: ['high-and-up'],
      items: [event],
    });

    // E-mail: subject, text and HTML.
    const ciso = r.out.slice(r.out.indexOf('=== ciso'));
    expect(ciso).toContain('Subject: [HIGH] 1 forum_post event · acme.test');
    expect(ciso).toContain('--- text ---');
    expect(ciso).toContain('--- html ---');
    expect(ciso).toContain('&lt;!channel&gt;');
    expect(ciso).toContain('https://mail.example.com/send?…');

    for (const secret of ['literal-token-value', 'token=abc']) expect(r.out).not.toContain(secret);
  });

  it('names each ticket and SIEM destination by the URL its sender posts to, one slash between base and path', async () => {
    const tickets = {
      destinations: {
        jira: {
          type: 'jira',
          url: 'https://acme.atlassian.net',
          email: 'soc@acme.test',
          apiToken: { secret: 'jiraToken' },
          project: 'SEC',
        },
        snow: {
          type: 'servicenow',
          url: 'https://acme.service-now.com/',
          username: 'svc',
          password: { secret: 'snowPassword' },
        },
        splunk: { type: 'splunk', url: 'https://splunk.acme.test:8088', token: { secret: 'hec' } },
        sentinel: {
          type: 'sentinel',
          tenantId: 't',
          clientId: 'c',
          clientSecret: { secret: 'entra' },
          endpoint: 'https://dce.ingest.monitor.azure.com/',
          ruleId: 'dcr-1',
          stream: 'Custom-Exposure',
        },
      },
      routes: [{ name: 'all', to: ['jira', 'snow', 'splunk', 'sentinel'] }],
    };
    const r = await preview([await file('event-tickets.json', event)], {
      ALERTS_CONFIG: await file('tickets.json', tickets),
    });
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain('POST https://acme.atlassian.net/rest/api/3/issue ');
    expect(r.out).toContain('POST https://acme.service-now.com/api/now/table/incident ');
    expect(r.out).toContain('POST https://splunk.acme.test:8088/services/collector/event ');
    expect(r.out).toContain(
      'POST https://dce.ingest.monitor.azure.com/dataCollectionRules/dcr-1/streams/Custom-Exposure ',
    );
    expect(r.out).not.toMatch(/[^:]\/\/(rest|api|services|dataCollectionRules)\//);
  });

  it('a credential follows the policy (hidden: no hash at all in the webhook body)', async () => {
    const env = { ALERTS_CONFIG: await file('config2.json', config) };
    const r = await preview([await file('cred2.json', credential)], env);
    expect(r.code).toBe(0);
    expect(r.out).toContain('=== siem (webhook) · routes: logins ===');
    expect(r.out).toContain('"kind": "credentials"');
    expect(r.out).not.toContain('"hash"');
    expect(r.out).not.toContain('Correct-Horse-9');
  });

  it('a silenced item says so and still shows what would have been sent', async () => {
    const env = { ALERTS_CONFIG: await file('config3.json', config) };
    const paste = { ...event, metadata: { ...event.metadata, type: 'paste', uid: 'paste/pastebin/abc' } };
    const r = await preview([await file('paste.json', paste)], env);
    expect(r.code).toBe(0);
    expect(r.out).toContain('SILENCED by "paste-noise" until 2999-01-01T00:00:00Z (paste noise)');
    expect(r.out).toContain('=== soc (slack) · routes: high-and-up, vip · silenced, not sent ===');
  });

  it('an item no route matches says so', async () => {
    const env = { ALERTS_CONFIG: await file('config4.json', config) };
    const low = { ...event, metadata: { ...event.metadata, severity: 'low' }, tenant_metadata: { tags: [] } };
    const r = await preview([await file('low.json', low)], env);
    expect(r.code).toBe(0);
    expect(r.out).toContain('no route matches this item: it would not be sent anywhere');
    expect(r.out).not.toContain('===');
  });

  it('--source changes the source routes match on', async () => {
    const env = {
      ALERTS_CONFIG: await file('config5.json', {
        destinations: { t: { type: 'console' } },
        sources: { identifierGroups: [{ id: 7 }] },
        routes: [{ name: 'group7', match: { sources: ['group:7'] }, to: ['t'] }],
      }),
    };
    const path = await file('event5.json', event);
    expect((await preview([path], env)).out).toContain('no route matches');
    expect((await preview([path, '--source', 'group:7'], env)).out).toContain(
      '=== t (console) · routes: group7 ===',
    );
    expect((await preview([path, '--source', 'nowhere'], env)).code).toBe(2);
  });
});

describe('preview refuses bad input with exit 2', () => {
  it('names each broken field of an invalid event', async () => {
    const broken = { ...event, metadata: { ...event.metadata, severity: 'urgent', matched_at: 'yesterday' } };
    const r = await preview([await file('broken.json', broken)]);
    expect(r.code).toBe(2);
    expect(r.err).toContain('is not a valid event');
    expect(r.err).toMatch(/\n {2}metadata\.severity: expected one of/);
    expect(r.err).toMatch(/\n {2}metadata\.matched_at: /);
    expect(r.out).toBe('');
  });

  it('names each broken field of an invalid credential, without printing its password', async () => {
    const broken = { ...credential, id: 'x', imported_at: '2026-11-20T08:00:00' };
    const r = await preview([await file('broken-cred.json', broken)]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/\n {2}id: expected a number, got a string/);
    expect(r.err).toMatch(/\n {2}imported_at: expected an ISO 8601 timestamp with an offset/);
    expect(r.err).not.toContain('Correct-Horse-9');
  });

  it('a file that is neither an event nor a credential', async () => {
    const r = await preview([await file('other.json', { hello: 'world' })]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/neither an event .*metadata\.uid.* nor a credential .*id and identity_name/);
  });

  it('a missing file or bad JSON', async () => {
    expect((await preview([join(dir, 'missing.json')])).err).toMatch(/cannot read .*ENOENT/);
    const path = join(dir, 'bad.json');
    await writeFile(path, '{');
    const r = await preview([path]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/bad\.json is not valid JSON/);
  });
});

describe('preview of several items due together', () => {
  const appConfig = {
    sources: { tenantEvents: { enabled: true }, credentials: { domains: ['example.com'] } },
    destinations: {
      app: { type: 'slack', token: { secret: 'socSlackBotToken' }, channel: 'C0123ABCD' },
      hook: { type: 'webhook', url: 'https://siem.example.com/in', followUps: true },
    },
    routes: [{ name: 'all', to: ['app', 'hook'] }],
    digest: { threshold: 3, maxItems: 2 },
    passwords: 'hidden',
  };
  const logins = Array.from({ length: 30 }, (_, i) => ({
    ...credential,
    id: 5000 + i,
    identity_name: `user${i}@mail.example.com`,
  }));

  it('a digest to a Slack app: the parent, then each reply of its thread, every login once', async () => {
    const path = await file('app.config.json', appConfig);
    const r = await preview([await file('logins.json', logins)], { ALERTS_CONFIG: path });
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain('30 items (0 events, 30 credentials), due together');
    expect(r.out).toContain('=== app (slack) · 30 items · routes: all ===');
    expect(r.out).toContain('chat.postMessage to C0123ABCD as the Slack app');
    expect(r.out).toMatch(/--- reply 1 of \d+ in its thread ---/);
    const slackPart = r.out.slice(r.out.indexOf('=== app'), r.out.indexOf('=== hook'));
    const [parent] = slackPart.split('--- reply 1');
    expect(parent).not.toMatch(/user\d+@/);
    for (const login of logins)
      expect(slackPart.split(login.identity_name).length - 1, login.identity_name).toBe(1);
    expect(r.out).not.toContain('Correct-Horse-9');
    // The webhook gets every item in one body, not a digest.
    expect(r.out).toContain('=== hook (webhook) · 30 items · routes: all ===');
  });

  it('an empty array, or a bad item, is named', async () => {
    const path = await file('app2.config.json', appConfig);
    expect((await preview([await file('empty.json', [])], { ALERTS_CONFIG: path })).err).toMatch(
      /empty\.json holds an empty array/,
    );
    const r = await preview([await file('mixed.json', [credential, { hello: 1 }])], { ALERTS_CONFIG: path });
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/mixed\.json \[1\] is neither an event/);
  });
});

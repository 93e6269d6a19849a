/** The render check behind `config validate`: samples through every destination, problems named. */
import { describe, expect, it } from 'vitest';
import { checkRendering, SAMPLE_DIGEST_MAX } from '../../lib/render/check.ts';
import { renderFor } from '../../lib/render/lazy.ts';
import { config, NOW } from './fixtures.ts';

const all = config({
  destinations: {
    soc: { type: 'slack', url: { secret: 'x' } },
    mail: {
      type: 'email',
      provider: 'generic',
      url: 'https://m.example/send',
      from: 'a@example.com',
      to: ['b@example.com'],
    },
    siem: { type: 'webhook', url: 'https://siem.example/in' },
    teams: { type: 'teams', url: { secret: 'x' } },
    chat: { type: 'discord', url: { secret: 'x' } },
    pager: { type: 'pagerduty', routingKey: { secret: 'x' } },
    jira: {
      type: 'jira',
      url: 'https://j.example',
      email: 'a@example.com',
      apiToken: { secret: 'x' },
      project: 'SEC',
    },
    snow: { type: 'servicenow', url: 'https://s.example', username: 'u', password: { secret: 'x' } },
    hec: { type: 'splunk', url: 'https://h.example', token: { secret: 'x' } },
    logs: {
      type: 'sentinel',
      tenantId: 't',
      clientId: 'c',
      clientSecret: { secret: 'x' },
      endpoint: 'https://dce.example',
      ruleId: 'dcr-1',
      stream: 'Custom-X_CL',
    },
    local: { type: 'console' },
  },
  routes: [
    {
      name: 'all',
      match: {},
      to: ['soc', 'mail', 'siem', 'teams', 'chat', 'pager', 'jira', 'snow', 'hec', 'logs', 'local'],
    },
  ],
  digest: { threshold: 3, maxItems: 45 },
});

describe('checkRendering', () => {
  it('finds nothing wrong with the real renderers, for every destination type and policy', async () => {
    for (const passwords of ['masked', 'hidden', 'clear'] as const) {
      expect(
        await checkRendering({ ...all, passwords }, { appUrl: 'https://app.example.test', now: NOW }),
      ).toEqual([]);
    }
  });

  it('stays fast, and still renders a digest that counts what it does not list, with any maxItems', async () => {
    const digestSizes: number[] = [];
    // CPU time, not wall time: what a busy machine's other processes take does not count.
    const started = process.cpuUsage();
    const errors = await checkRendering(
      { ...all, digest: { threshold: 5, maxItems: 100_000 } },
      {
        appUrl: 'https://app.example.test',
        now: NOW,
        render: async (destination, alerts, opts) => {
          if (opts.digest.threshold === 1) digestSizes.push(alerts.length);
          return renderFor(destination, alerts, opts);
        },
      },
    );
    expect(errors).toEqual([]);
    // Every destination; each sample digest holds more items than it may list, so the rest is counted.
    expect(digestSizes).toEqual(
      Array(Object.keys(all.destinations).length).fill((SAMPLE_DIGEST_MAX + 5) * 2),
    );
    const cpu = process.cpuUsage(started);
    expect((cpu.user + cpu.system) / 1000).toBeLessThan(5_000);
  });

  it('a Slack app: its digest thread and its follow-ups are checked too, and a reply over a limit is named', async () => {
    const app = config({
      destinations: { app: { type: 'slack', token: { secret: 'bot' }, channel: 'C0123ABCD' } },
      routes: [{ name: 'all', match: {}, to: ['app'] }],
      digest: { threshold: 3, maxItems: 45 },
    });
    const options = { appUrl: 'https://app.example.test', now: NOW };
    expect(await checkRendering(app, options)).toEqual([]);
    const errors = await checkRendering(app, {
      ...options,
      render: async (destination, alerts, opts) =>
        (await renderFor(destination, alerts, opts)).map((m) =>
          m.thread
            ? { ...m, thread: [...m.thread, { text: 'x', blocks: Array(60).fill({ type: 'divider' }) }] }
            : m,
        ),
    });
    expect(
      errors.some((e) => /^destinations\.app: sample digest, thread reply \d+ \(slack\): .*50/.test(e)),
    ).toBe(true);
  });

  it('reports a renderer that throws, naming the destination and the sample', async () => {
    const errors = await checkRendering(all, {
      appUrl: 'https://app.example.test',
      now: NOW,
      render: async (destination, alerts, opts) => {
        if (destination.type === 'email') throw new Error('template exploded');
        return renderFor(destination, alerts, opts);
      },
    });
    expect(errors).toContain('destinations.mail: sample event (email): rendering failed: template exploded');
    expect(errors.every((e) => e.startsWith('destinations.mail:'))).toBe(true);
  });

  it('reports a Slack message over a limit', async () => {
    const errors = await checkRendering(all, {
      appUrl: 'https://app.example.test',
      now: NOW,
      render: async (destination, alerts, opts) =>
        destination.type === 'slack'
          ? [
              {
                deliveryIds: alerts.map((a) => a.deliveryId),
                summary: 's',
                payload: {
                  text: 't',
                  blocks: [{ type: 'header', text: { type: 'plain_text', text: 'h'.repeat(151) } }],
                },
              },
            ]
          : renderFor(destination, alerts, opts),
    });
    expect(errors).toContain(
      'destinations.soc: sample event (slack): blocks[0] header text has 151 characters (limit 150)',
    );
  });

  it('reports a password that survives the policy, and items not covered', async () => {
    const errors = await checkRendering(all, {
      appUrl: 'https://app.example.test',
      now: NOW,
      render: async (destination, alerts, opts) =>
        destination.type === 'console'
          ? [
              {
                deliveryIds: [],
                summary: 's',
                payload: JSON.stringify(alerts.map((a) => ({ ...a.item, hash: 'Sample-Passw0rd!' }))),
              },
            ]
          : renderFor(destination, alerts, opts),
    });
    expect(errors).toContain(
      'destinations.local: sample credential (console): the sample password survives the "masked" policy',
    );
    expect(errors).toContain(
      'destinations.local: sample event (console): messages do not cover every item exactly once',
    );
  });
});

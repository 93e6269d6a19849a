/**
 * The operator notice "destination refuses deliveries", as each kind of ops destination shows it:
 * the product's name once, never `exposure-alerts: exposure-alerts:`. Real dynalite, real local
 * receivers for the refusing destination and the ops ones.
 */
import { describe, expect, it } from 'vitest';
import { useDynalite } from '../helpers/dynamo.ts';
import { useReceivers } from '../helpers/receiver.ts';
import { deliveryWorld } from './seed.ts';

const db = useDynalite();
const receiver = useReceivers();

const count = (text: string, what: string) => text.split(what).length - 1;

describe('the refusal notice', () => {
  it('names the product once in the console, Slack, e-mail and webhook', async () => {
    const gone = await receiver({ status: 410, body: 'channel_is_archived' });
    const slack = await receiver({ status: 200, body: 'ok' });
    const mail = await receiver({ status: 202, body: '' });
    const hook = await receiver({ status: 200, body: 'ok' });
    const world = await deliveryWorld(db, {
      destinations: {
        gone: { type: 'webhook', url: gone.url },
        local: { type: 'console' },
        slackOps: { type: 'slack', url: slack.url },
        mailOps: {
          type: 'email',
          provider: 'generic',
          url: mail.url,
          from: 'alerts@example.com',
          to: ['ops@example.com'],
        },
        hookOps: { type: 'webhook', url: hook.url },
      },
      routes: [{ name: 'all', match: {}, to: ['gone'] }],
      ops: { to: ['local', 'slackOps', 'mailOps', 'hookOps'] },
    });
    await world.seed('gone', 1);
    await world.pass(30, { only: ['gone'] });

    const printed = world.console.join('');
    expect(printed).toContain('exposure-alerts: destination "gone" refuses deliveries');
    expect(printed).not.toContain('exposure-alerts: exposure-alerts:');
    expect(count(printed.split('\n')[0] ?? '', 'exposure-alerts')).toBe(1);

    const s = slack.requests[0]?.json() as {
      text: string;
      blocks: { type: string; text?: { text: string } }[];
    };
    const header = s.blocks.find((b) => b.type === 'header')?.text?.text ?? '';
    expect(header).toBe('exposure-alerts: destination "gone" refuses deliveries');
    expect(count(s.text, 'exposure-alerts:')).toBe(1);

    const m = mail.requests[0]?.json() as { subject: string; text: string; html: string };
    expect(m.subject).toBe('[exposure-alerts] destination "gone" refuses deliveries');
    expect(m.text.split('\n')[0]).toBe('destination "gone" refuses deliveries');
    expect(m.html).toMatch(/<h2[^>]*>destination \S+gone\S+ refuses deliveries<\/h2>/);
    expect(m.html).not.toContain('exposure-alerts: exposure-alerts');

    const h = hook.requests[0]?.json() as { kind: string; title: string };
    expect(h.kind).toBe('notice');
    expect(h.title).toBe('destination "gone" refuses deliveries');
  }, 20_000);
});

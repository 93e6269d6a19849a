/** Notices: a test message is marked as a test in every rendering. */
import { describe, expect, it } from 'vitest';
import type { EmailContent } from '../../lib/destinations/email/render.ts';
import type { SlackPayload } from '../../lib/destinations/slack/limits.ts';
import { slackLimitProblems } from '../../lib/destinations/slack/limits.ts';
import type { WebhookNoticeBody } from '../../lib/destinations/webhook/render.ts';
import { TEST_MARK } from '../../lib/render/notice.ts';
import type { Notice } from '../../lib/render/types.ts';
import { noticeTo, renderOptions } from './fixtures.ts';

const test: Notice = {
  kind: 'test',
  title: 'Destination check',
  text: 'Sent by destinations test to <!channel>',
};
const ops: Notice = { kind: 'ops', title: 'soc refuses messages', text: '404 channel_not_found' };
const opts = renderOptions({ destination: 'soc' });

describe('notices', () => {
  it('marks a test in Slack: header, fallback text, and escapes the text', async () => {
    const slack = await noticeTo<SlackPayload>({ type: 'slack' }, test, opts);
    expect(slack.text.startsWith('[TEST] exposure-alerts test message — no action needed')).toBe(true);
    expect(JSON.stringify(slack.blocks[0])).toContain(
      '[TEST] exposure-alerts test message — no action needed',
    );
    expect(JSON.stringify(slack)).toContain('&lt;!channel&gt;');
    expect(JSON.stringify(slack)).not.toContain('<!channel>');
    expect(slackLimitProblems(slack)).toEqual([]);
  });

  it('marks a test in e-mail subject, text and HTML', async () => {
    const mail = await noticeTo<EmailContent>({ type: 'email' }, test, opts);
    expect(mail.subject).toBe(TEST_MARK);
    expect(mail.text.startsWith(TEST_MARK)).toBe(true);
    expect(mail.html).toContain('[TEST] exposure-alerts test message — no action needed');
    expect(mail.html).toContain('&lt;!channel&gt;');
  });

  it('marks a test in the webhook body: kind test, title with the mark, no items', async () => {
    expect(await noticeTo({ type: 'webhook' }, test, opts)).toEqual({
      version: 1,
      kind: 'test',
      destination: 'soc',
      routes: [],
      items: [],
      sentAt: '2026-11-21T12:00:00Z',
      title: `${TEST_MARK}: Destination check`,
      message: test.text,
    });
  });

  it('marks a test on the console, first line', async () => {
    expect((await noticeTo<string>({ type: 'console' }, test, opts)).split('\n')[0]).toBe(TEST_MARK);
  });

  it('an ops notice is not marked as a test anywhere', async () => {
    expect((await noticeTo<WebhookNoticeBody>({ type: 'webhook' }, ops, opts)).kind).toBe('notice');
    expect(JSON.stringify(await noticeTo({ type: 'slack' }, ops, opts))).not.toContain('[TEST]');
    expect((await noticeTo<EmailContent>({ type: 'email' }, ops, opts)).subject).toBe(
      '[exposure-alerts] soc refuses messages',
    );
    expect(await noticeTo({ type: 'console' }, ops, opts)).toContain('404 channel_not_found');
  });
});

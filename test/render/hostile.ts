/** Upstream text written by an attacker, and helpers that measure what a Slack message holds. */
import { expect } from 'vitest';
import type { SlackPayload } from '../../lib/destinations/slack/limits.ts';
import { slackLimitProblems } from '../../lib/destinations/slack/limits.ts';
import { credentialAlert, eventAlert, makeCredential, makeEvent, toDelivery } from './fixtures.ts';

/** The app URL the render fixtures link to. */
const APP = 'https://app.example.test';

export const PING_CHANNEL = '<!channel>';
export const PING_USER = '<@U123>';
export const FORGED_LINK = '<https://evil.example|click>';
export const ESCAPED_AMP = '&amp;';
export const HOSTILE = `${PING_CHANNEL} ${PING_USER} ${FORGED_LINK} ${ESCAPED_AMP} <!here> <#C42> <!subteam^S1>`;

export function hostileEvent(i = 0) {
  return makeEvent({
    metadata: {
      type: 'forum_post',
      uid: `forum_post/dark<!channel>forum/thread/${i}/post/<@U123>`,
      severity: i % 5 === 0 ? 'critical' : 'high',
      flare_url: 'javascript:alert(1)',
    },
    tenant_metadata: { tags: [PING_USER, 'vip'], notes: `${FORGED_LINK} see notes` },
    identifiers: [{ id: 1, name: `${PING_CHANNEL}.acme.test` }],
    highlights: {
      content: [`${HOSTILE} in <mark>${PING_CHANNEL} acme.test *bold* \`code\`</mark> ${'x'.repeat(10_000)}`],
      [`title ${PING_USER}`]: [`<mark>${FORGED_LINK}</mark>`],
    },
  });
}

export function hostileCredential(i = 0) {
  return makeCredential({
    identity_name: `${PING_CHANNEL}user${i}@example.com`,
    domain: 'example.com',
    source_id: `src-${PING_USER}`,
    source: { id: 'src', name: `Leak ${FORGED_LINK} ${ESCAPED_AMP}`, breached_at: null, leaked_at: null },
  });
}

/** A digest of hostile events and credentials that came from events: each has a link of its own. */
export function hostileDigest(destination: string) {
  return [
    ...Array.from({ length: 6 }, (_, i) => toDelivery(eventAlert(hostileEvent(i)), destination)),
    ...Array.from({ length: 6 }, (_, i) =>
      toDelivery(
        credentialAlert({ ...hostileCredential(i), event_uid: `leak/combo/file-${i}` }),
        destination,
      ),
    ),
  ];
}

/** Every string under a `text` key, at any depth, with where it was. */
export function slackTexts(payload: SlackPayload): { path: string; text: string }[] {
  const out: { path: string; text: string }[] = [];
  const walk = (value: unknown, path: string) => {
    if (Array.isArray(value)) {
      value.forEach((v, i) => {
        walk(v, `${path}[${i}]`);
      });
    } else if (value && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) {
        if (k === 'text' && typeof v === 'string') out.push({ path: `${path}.text`, text: v });
        else walk(v, `${path}.${k}`);
      }
    }
  };
  walk(payload, 'payload');
  return out;
}

/**
 * A text with our own links (to `appUrl`) taken out: whatever `<` is left came from upstream text
 * and was not escaped. Our links are `<https://app…|label>`.
 */
export function withoutOwnLinks(text: string, appUrl: string): string {
  const escaped = appUrl.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return text.replace(new RegExp(`<${escaped}[^<>|]*\\|[^<>]*>`, 'g'), '');
}

/** Measures every limit directly, independently of slackLimitProblems. */
export function expectWithinSlackLimits(payload: SlackPayload) {
  expect(payload.text.length, 'top-level text present').toBeGreaterThan(0);
  expect(payload.text.length, 'top-level text').toBeLessThanOrEqual(40_000);
  expect(payload.blocks.length, 'block count').toBeLessThanOrEqual(50);
  let total = 0;
  for (const block of payload.blocks) {
    if (typeof block.block_id === 'string')
      expect(block.block_id.length, 'block_id').toBeLessThanOrEqual(255);
    if (block.type === 'header') {
      const text = block.text as { type: string; text: string };
      expect(text.type, 'header is plain_text').toBe('plain_text');
      expect(text.text.length, 'header text').toBeLessThanOrEqual(150);
      total += text.text.length;
    }
    if (block.type === 'section') {
      const text = block.text as { text: string } | undefined;
      if (text) {
        expect(text.text.length, 'section text').toBeLessThanOrEqual(3_000);
        total += text.text.length;
      }
      const fields = (block.fields as { text: string }[] | undefined) ?? [];
      expect(fields.length, 'section fields').toBeLessThanOrEqual(10);
      for (const f of fields) {
        expect(f.text.length, 'field text').toBeLessThanOrEqual(2_000);
        total += f.text.length;
      }
    }
    if (block.type === 'context') {
      for (const e of block.elements as { text: string }[]) total += e.text.length;
    }
  }
  expect(total, 'total characters of block text').toBeLessThan(12_000);
  expect(slackLimitProblems(payload)).toEqual([]);
}

export function expectNothingHostile(payload: SlackPayload, appUrl = APP) {
  for (const { path, text } of slackTexts(payload)) {
    const rest = withoutOwnLinks(text, appUrl);
    expect(rest, `${path} keeps no raw <`).not.toContain('<');
    expect(rest, `${path} keeps no raw >`).not.toContain('>');
    expect(text, `${path} has no <!`).not.toMatch(/<!/);
    expect(text, `${path} has no <@`).not.toMatch(/<@/);
    expect(text, `${path} has no link to evil.example`).not.toMatch(/<https?:\/\/evil/);
  }
}

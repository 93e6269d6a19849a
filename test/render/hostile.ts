/** Upstream text written by an attacker, and helpers that measure what a Slack message holds. */
import type { SlackPayload } from '../../lib/render/types.ts';
import { makeCredential, makeEvent } from './fixtures.ts';

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

/**
 * Built-in sample items, for rendering every destination before anything is sent (`config
 * validate`) and for docs. One ordinary event, one hostile event (pings, a forged link, an
 * entity, Markdown and a Teams mention, a 10,000-character highlight: what the wild sends), and one
 * cleartext credential.
 */
import type { Credential, EventItem } from '../upstream/schemas.ts';

/** The password of the sample credential; a rendering that shows it has not applied the policy. */
export const SAMPLE_PASSWORD = 'Sample-Passw0rd!';

export function sampleEvent(now: Date): EventItem {
  const at = new Date(now.getTime() - 3_600_000).toISOString();
  return {
    metadata: {
      estimated_created_at: at,
      matched_at: now.toISOString(),
      type: 'forum_post',
      uid: 'forum_post/darkforum/thread/1234/post/5678',
      severity: 'high',
    },
    tenant_metadata: {
      severity: { original: 'high', override: 'critical' },
      tags: ['vip', 'sample'],
      notes: '',
    },
    identifiers: [
      { id: 1, name: 'example.com' },
      { id: 2, name: 'ceo@example.com' },
    ],
    highlights: {
      content: ['Selling access to <mark>example.com</mark> VPN, admin panel included'],
      title: ['<mark>ceo@example.com</mark> combo list'],
    },
  };
}

export function sampleHostileEvent(now: Date): EventItem {
  const base = sampleEvent(now);
  return {
    ...base,
    metadata: { ...base.metadata, type: 'paste', uid: 'paste/pastebin/<!channel>/x', severity: 'medium' },
    identifiers: [{ id: 3, name: '<!here> example.com' }],
    highlights: {
      content: [
        `<!channel> <@U123> <https://evil.example|click> &amp; *_~\` <mark>example.com *x* \`y\`</mark> ${'A'.repeat(10_000)}`,
      ],
      // Markdown, where a destination renders it (a Teams TextBlock): a link, bold, a heading, a mention.
      title: ['# heading [click](https://evil) **bold** <at>everyone</at> <mark>example.com</mark>'],
    },
  };
}

export function sampleCredential(now: Date): Credential {
  return {
    id: 424_242,
    identity_name: 'jane.doe@example.com',
    domain: 'example.com',
    hash: SAMPLE_PASSWORD,
    hash_type: 'plaintext',
    imported_at: now.toISOString(),
    source_id: 'sample-combo-list',
    source: {
      id: 'sample-combo-list',
      name: 'Sample combo list',
      breached_at: '2024-01-01T00:00:00Z',
      leaked_at: '2024-02-01T00:00:00Z',
    },
    event_uid: 'leak/combolists/sample/2024',
  };
}

/** A lookup's answer in Slack (`/exposure lookup`): upstream text escaped, passwords as the policy left them, within one message. */
import { describe, expect, it } from 'vitest';
import { parseSimilar } from '../../lib/api/slack-similar.ts';
import { lookupText } from '../../lib/render/lookup.ts';
import { HOSTILE } from '../render/hostile.ts';

describe('lookupText', () => {
  it('shows hostile names and sources as text: nothing pings, links or formats', () => {
    const text = lookupText({
      identities: Array.from({ length: 20 }, (_, i) => ({
        name: `${HOSTILE} *bold* user${i}@x.test`,
        leaks: [
          { source: `Leak ${HOSTILE}`, leakedAt: '2026-01-01T00:00:00.000Z', password: 'S*****`<!here>' },
          { source: 'x'.repeat(5_000), leakedAt: null },
        ],
      })),
      more: 7,
    });
    expect(text).not.toMatch(/<[!@#]/);
    expect(text).not.toMatch(/<https?:/);
    expect(text).toContain('&lt;!channel&gt;');
    expect(text.length).toBeLessThanOrEqual(3_900);
    expect(text).toMatch(/…and \d+ more identities\.$/);
  });

  it('says when nothing was found', () => {
    expect(lookupText({ identities: [], more: 0 })).toBe('Nothing found.');
  });
});

describe('parseSimilar', () => {
  it('reads what the select carries, and refuses anything else', () => {
    expect(parseSimilar('exposure:a/b/c', 'P1D|forum_post|11,12')).toEqual({
      key: 'a/b/c',
      type: 'forum_post',
      identifiers: [11, 12],
      for: 'P1D',
    });
    expect(parseSimilar('exposure:a', 'P2D|forum_post|')).toBeUndefined();
    expect(parseSimilar('exposure:a', 'PT1H|Forum Post|')).toBeUndefined();
    expect(parseSimilar('other:a', 'PT1H|forum_post|')).toBeUndefined();
    expect(parseSimilar('exposure:a', 'PT1H|forum_post|1,x')).toBeUndefined();
  });
});

/**
 * Text no destination should get: a lone UTF-16 surrogate (a strict JSON parser may answer 400,
 * making the delivery dead) and the invisible characters of look-alike names (`exa\u200bmple.com`).
 * Through every renderer, one event at a time and as a digest: every body is well-formed text, and
 * no zero-width character is left but the joiner inside an emoji.
 */
import { describe, expect, it } from 'vitest';
import type { RenderOptions } from '../../lib/render/types.ts';
import { parseWellFormed } from '../../lib/text.ts';
import {
  credentialAlert,
  eventAlert,
  makeCredential,
  makeEvent,
  renderOptions,
  renderTo,
  toDelivery,
} from './fixtures.ts';

const LONE = '\ud800';
const LOOKALIKE = 'exa\u200bmple.com ac\u2060me\ufeff.test so\u00adc ex\u200dample';
const EMOJI = '👩‍💻';
// Written out here, not imported: what must not reach a destination.
const INVISIBLE = /[\u00ad\u180e\u200b\u200c\u2060-\u2064\ufeff]/;
const LONE_ANYWHERE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

function odd(i: number) {
  return makeEvent({
    identifiers: [{ id: 1, name: `${LOOKALIKE} ${LONE}` }],
    highlights: { content: [`<mark>${LOOKALIKE}</mark> ${EMOJI} ${LONE} tail`] },
    tenant_metadata: { tags: [`vip${LONE}`], notes: `${LOOKALIKE}` },
    metadata: { uid: `forum_post/darkforum/thread-${i}`, type: 'forum_post', severity: 'critical' },
  });
}

const kinds = ['slack', 'email', 'teams', 'pagerduty', 'console', 'webhook'] as const;

describe('lone surrogates and invisible characters', () => {
  it.each(kinds)('%s: well-formed text, no invisible character, the emoji intact', async (type) => {
    const credential = makeCredential({
      identity_name: `jo${LONE}hn@exa\u200bmple.com`,
      domain: 'example.com',
    });
    for (const alerts of [
      [toDelivery(eventAlert(odd(1)))],
      [toDelivery(credentialAlert(credential))],
      Array.from({ length: 12 }, (_, i) => toDelivery(eventAlert(odd(i + 10)))),
    ]) {
      const opts: RenderOptions = renderOptions({ digest: { threshold: 5, maxItems: 20 } });
      for (const { payload } of await renderTo({ type }, alerts, opts)) {
        const text = typeof payload === 'string' ? payload : JSON.stringify(payload);
        // PagerDuty's custom_details is the item as data, as the webhook's items are: its text is the rest.
        const shown =
          type === 'pagerduty'
            ? JSON.stringify({
                ...(payload as object),
                payload: { ...(payload as { payload: object }).payload, custom_details: null },
              })
            : text;
        expect(LONE_ANYWHERE.test(text), `${type}: a lone surrogate`).toBe(false);
        // JSON.stringify writes a lone surrogate as an escape: none may be there either.
        expect(/\\ud[89a-f][0-9a-f]{2}/i.test(text), `${type}: an escaped surrogate`).toBe(false);
        // The webhook gets the item as data, as the upstream wrote it (well-formed): no text is shown.
        if (type === 'webhook') continue;
        expect(INVISIBLE.exec(shown)?.[0], `${type}: an invisible character`).toBeUndefined();
        expect(shown).not.toContain('ex\u200dample');
        if (alerts.length === 1 && alerts[0]?.kind === 'event' && type !== 'pagerduty')
          expect(text).toContain(EMOJI);
      }
    }
  });

  it('at ingest: a \\ud800 escape in an upstream body becomes U+FFFD, and only such bodies pay for it', () => {
    expect(parseWellFormed('{"a":"x\\ud800y","b":["\\udc00"],"ok":"\\ud83d\\ude00"}')).toEqual({
      a: 'x\ufffdy',
      b: ['\ufffd'],
      ok: '😀',
    });
    expect(parseWellFormed('{"a":"plain"}')).toEqual({ a: 'plain' });
  });
});

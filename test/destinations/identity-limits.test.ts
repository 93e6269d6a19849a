/**
 * A verdict line makes every login's entry longer, so the kinds that fill a message by size must
 * count it: a group of 1,500 hostile logins, each with a long verdict line, splits into parts each
 * within its kind's limits and each showing exactly the logins (and verdicts) it covers; a digest
 * of them lists what fits, counts the rest, and never loses a line to a safety net's cut.
 */
import { describe, expect, it } from 'vitest';
import type { PagerDutyEvent } from '../../lib/destinations/pagerduty/render.ts';
import type { DeliveryAlert } from '../../lib/model.ts';
import type { Rendered, RenderOptions } from '../../lib/render/types.ts';
import { renderOptions, renderTo } from '../render/fixtures.ts';
import { hostileCredential } from '../render/hostile.ts';
import { VERDICT_SAMPLES, withVerdict } from './identity.ts';
import { CASES, expectInert, payloadsOf } from './identity-cases.ts';

/** A provider's label long enough that each kind clips the line (at 300 characters). */
const longLabel: RenderOptions['identityLabel'] = (_tenant, provider) =>
  `Entra ID ${provider} ${'directory '.repeat(40)}`;

const TOTAL = 1_500;

/** 1,500 hostile logins of one domain and leak, the verdicts taking turns. */
function logins(): DeliveryAlert[] {
  return Array.from({ length: TOTAL }, (_, i) =>
    withVerdict(VERDICT_SAMPLES[i % VERDICT_SAMPLES.length], hostileCredential(i)),
  );
}

/** How many verdict lines a text holds: each starts with the label. */
const verdictLines = (text: string) => text.split('Entra ID ').length - 1;
/** What a message counts and does not list (`… and 480 more items not listed`). */
const unlisted = (text: string) => Number(/… and ([\d,]+) more/.exec(text)?.[1]?.replaceAll(',', '') ?? 0);

const GROUPING = ['Slack (webhook)', 'Microsoft Teams', 'Discord', 'Google Chat', 'Mattermost'];

describe.each(CASES.filter((c) => GROUPING.includes(c.name)))('$name', (c) => {
  it('a group of 1,500 logins with long verdicts: parts within the limits, each showing exactly its logins', async () => {
    const alerts = logins();
    const opts = renderOptions({ digest: { threshold: 10_000, maxItems: 20 }, identityLabel: longLabel });
    const rendered = await renderTo(c.target, alerts, opts);
    expect(rendered.length).toBeGreaterThan(1);
    expect(rendered.flatMap((r) => r.deliveryIds)).toEqual(alerts.map((a) => a.deliveryId));
    for (const part of rendered) {
      // Each login of the part with its verdict, none cut away by the kind's safety net.
      expect(verdictLines(c.text(part.payload))).toBe(part.deliveryIds.length);
      expect(c.text(part.payload)).not.toContain('truncated');
    }
    await expectInert(c, payloadsOf(rendered));
  });
});

describe.each(CASES)('$name', (c) => {
  it('a digest of 1,500 logins with long verdicts: what fits listed, the rest counted, limits kept', async () => {
    const alerts = logins();
    const opts = renderOptions({ digest: { threshold: 1, maxItems: 1_000 }, identityLabel: longLabel });
    const rendered = await renderTo(c.target, alerts, opts);
    expect(rendered).toHaveLength(1);
    const digest = rendered[0] as Rendered<unknown>;
    expect(digest.deliveryIds).toHaveLength(TOTAL);
    expect(c.text(digest.payload)).toContain(
      '250 at risk, 250 rotated, 250 disabled, 250 no account, 500 unknown',
    );
    const payloads = payloadsOf(rendered);
    let listed = 0;
    let counted = 0;
    if (c.target.type === 'pagerduty') {
      const details = (digest.payload as PagerDutyEvent).payload?.custom_details as {
        items: unknown[];
        notListed: number;
      };
      listed = details.items.length;
      counted = details.notListed;
    } else
      for (const payload of payloads) {
        listed += verdictLines(c.text(payload));
        counted += unlisted(c.text(payload));
        expect(c.text(payload)).not.toContain('truncated');
      }
    expect(listed, 'logins listed with their verdicts').toBeGreaterThan(0);
    expect(listed + counted, 'every login listed or counted, once').toBe(TOTAL);
    await expectInert(c, payloads);
  });
});

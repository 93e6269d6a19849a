/**
 * Jira issues from hostile upstream text: literal text nodes only, our link alone, within Jira's
 * limits. A digest issue links each item it lists.
 */
import { describe, expect, it } from 'vitest';
import { renderJira } from '../../../lib/destinations/jira/render.ts';
import { alertLink } from '../../../lib/render/link.ts';
import { adfProblem } from '../../helpers/jira.ts';
import { credentialAlert, eventAlert, renderOptions, toDelivery } from '../../render/fixtures.ts';
import { hostileCredential, hostileDigest, hostileEvent } from '../../render/hostile.ts';

const APP = 'https://app.example.test';

function marksOf(doc: unknown): { type: string; attrs?: { href?: string } }[] {
  const out: { type: string; attrs?: { href?: string } }[] = [];
  const walk = (n: unknown) => {
    const node = n as { marks?: typeof out; content?: unknown[] };
    out.push(...(node.marks ?? []));
    for (const c of node.content ?? []) walk(c);
  };
  walk(doc);
  return out;
}

describe('renderJira', () => {
  it.each([
    ['a hostile event', () => toDelivery(eventAlert(hostileEvent(1)), 'tickets')],
    ['a hostile credential', () => toDelivery(credentialAlert(hostileCredential(1)), 'tickets')],
  ])('%s: a valid issue; the only link is ours; the text shown as typed', (_n, make) => {
    const [issue] = renderJira([make()], renderOptions({ destination: 'tickets' }));
    const content = issue?.payload;
    expect(adfProblem(content?.description)).toBeUndefined();
    expect(content?.summary.length).toBeLessThanOrEqual(255);
    expect(content?.summary).not.toMatch(/[\r\n]/);
    expect(content?.labels.every((l) => /^exposure-[0-9a-f]{16}$/.test(l))).toBe(true);
    const links = marksOf(content?.description).filter((m) => m.type === 'link');
    expect(links.every((m) => m.attrs?.href?.startsWith(APP))).toBe(true);
    // A forged link is text, never a link.
    expect(JSON.stringify(content?.description)).not.toContain('"href":"https://evil');
    // ...and shown as the text it was.
    expect(JSON.stringify(content?.description)).toContain('https://evil.example|click');
  });

  it('a digest of 1,000 hostile events: one issue, what fits listed and the rest counted, each once', () => {
    const alerts = Array.from({ length: 1_000 }, (_, i) =>
      toDelivery(eventAlert(hostileEvent(i)), 'tickets'),
    );
    const issues = renderJira(
      alerts,
      renderOptions({ destination: 'tickets', digest: { threshold: 5, maxItems: 20 } }),
    );
    expect(issues).toHaveLength(1);
    expect(issues[0]?.deliveryIds).toHaveLength(1_000);
    const description = JSON.stringify(issues[0]?.payload.description);
    expect(description.length).toBeLessThan(32_767 * 2);
    expect(description).toMatch(/… and \d+ more items not listed \(1000 in all\)/);
    expect(adfProblem(issues[0]?.payload.description)).toBeUndefined();
  });
});

const digestOptions = (destination: string) =>
  renderOptions({ destination, digest: { threshold: 5, maxItems: 20 } });

describe('a digest issue links each item it lists', () => {
  it('one link mark per item, to that item, on our own words', () => {
    const alerts = hostileDigest('tickets');
    const issues = renderJira(alerts, digestOptions('tickets'));
    expect(issues).toHaveLength(2);
    for (const issue of issues) {
      const own = alerts.filter((a) => issue.deliveryIds.includes(a.deliveryId));
      const links = marksOf(issue.payload.description).filter((m) => m.type === 'link');
      expect(links.map((m) => m.attrs?.href)).toEqual(own.map((a) => alertLink(a, APP)));
      expect(adfProblem(issue.payload.description)).toBeUndefined();
    }
  });
});

/**
 * Teams rendering: upstream text only in TextRuns (never a TextBlock, a Fact or a mention), the
 * hostile samples Slack is tested with plus Markdown ones, control and bidi characters gone, every
 * card under 28,000 bytes whatever the item (a 1,000-item digest, a 2,000-login group, emoji and
 * quotes), the layout, and that no password reaches a card.
 */
import { describe, expect, it } from 'vitest';
import type { TeamsPayload } from '../../../lib/destinations/teams/card.ts';
import { TEAMS_LABELS } from '../../../lib/destinations/teams/card.ts';
import { teamsProblems } from '../../../lib/destinations/teams/limits.ts';
import { renderTeams } from '../../../lib/destinations/teams/render.ts';
import type { DeliveryAlert } from '../../../lib/model.ts';
import { sampleHostileEvent } from '../../../lib/render/samples.ts';
import type { Rendered } from '../../../lib/render/types.ts';
import { applyPasswordPolicy } from '../../../lib/rules/passwords.ts';
import { flowFailure } from '../../helpers/teams-receiver.ts';
import {
  credentialAlert,
  eventAlert,
  makeCredential,
  makeEvent,
  NOW,
  renderOptions,
  toDelivery,
} from '../../render/fixtures.ts';
import {
  FORGED_LINK,
  HOSTILE,
  hostileCredential,
  hostileEvent,
  PING_CHANNEL,
  PING_USER,
} from '../../render/hostile.ts';

const MARKDOWN = ['[click](https://evil)', '**bold**', '# heading', '<at>everyone</at>'];
const MARKERS = [PING_CHANNEL, PING_USER, FORGED_LINK, ...MARKDOWN];
const FORBIDDEN = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;
const single = renderOptions({ digest: { threshold: 100, maxItems: 20 } });

function markdownEvent(i = 0) {
  return makeEvent({
    metadata: { type: 'forum_post', uid: `forum_post/md/${i}`, severity: 'high' },
    identifiers: [{ id: 1, name: `**bold** <at>everyone</at>` }],
    tenant_metadata: { tags: ['[click](https://evil)'], notes: '# heading\n<at>everyone</at>' },
    highlights: {
      content: [`# heading\n[click](https://evil) <mark>**bold**</mark> <at>everyone</at> ${HOSTILE}`],
      '# heading': ['<mark>[click](https://evil)</mark>'],
    },
  });
}

/** Every string leaf of a value, with its path and the object holding it. */
function leaves(value: unknown, path = 'payload', parent?: Record<string, unknown>, key?: string) {
  const out: { path: string; text: string; parent?: Record<string, unknown>; key?: string }[] = [];
  if (typeof value === 'string') out.push({ path, text: value, parent, key });
  else if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) out.push(...leaves(v, `${path}[${i}]`, parent, key));
  } else if (value && typeof value === 'object')
    for (const [k, v] of Object.entries(value))
      out.push(...leaves(v, `${path}.${k}`, value as Record<string, unknown>, k));
  return out;
}

const bytes = (payload: unknown) => Buffer.byteLength(JSON.stringify(payload));
const cardOf = (r: Rendered<TeamsPayload>) => r.payload.attachments[0].content;

/**
 * The contract's text rule, checked on the card itself rather than through teamsProblems. Each
 * breach is collected and the lists checked empty once: an `expect` per leaf (tens of thousands in
 * a 2,000-login group) was most of this file's CPU.
 */
function expectTextRule(payload: TeamsPayload) {
  const labels = new Set<string>(TEAMS_LABELS);
  const breaches: string[] = [];
  for (const leaf of leaves(payload)) {
    const type = leaf.parent?.type;
    if (type === 'TextBlock' && leaf.key === 'text' && !labels.has(leaf.text))
      breaches.push(`${leaf.path}: a TextBlock holds "${leaf.text}"`);
    if (type === 'FactSet' || type === 'Fact') breaches.push(`${leaf.path}: in a ${type}`);
    if (leaf.path.includes('msteams')) breaches.push(`${leaf.path}: msteams`);
    for (const marker of MARKERS) {
      if (!leaf.text.includes(marker)) continue;
      // Upstream text is shown as it is, and only where nothing renders Markdown or mentions.
      if (type !== 'TextRun' || leaf.key !== 'text')
        breaches.push(`${leaf.path} holds ${marker} in a ${String(type)}'s ${leaf.key}`);
    }
    if (FORBIDDEN.test(leaf.text)) breaches.push(`${leaf.path} holds a control character`);
  }
  expect(breaches).toEqual([]);
  expect(JSON.stringify(payload)).not.toContain('"msteams"');
  expect(teamsProblems(payload)).toEqual([]);
  expect(flowFailure(JSON.stringify(payload))).toBeUndefined();
  expect(bytes(payload)).toBeLessThan(28_000);
}

const hostileAlerts = (): DeliveryAlert[] => [
  toDelivery(eventAlert(hostileEvent(1))),
  toDelivery(eventAlert(markdownEvent(1))),
  toDelivery(eventAlert(sampleHostileEvent(NOW))),
  toDelivery(credentialAlert(hostileCredential(1))),
  toDelivery(credentialAlert(hostileCredential(2))),
];

describe('Teams: hostile text', () => {
  it('one card per event and per credential group: upstream text only in TextRuns, shown literally', () => {
    const rendered = renderTeams(hostileAlerts(), single);
    expect(rendered).toHaveLength(4);
    for (const r of rendered) expectTextRule(r.payload);
    const all = JSON.stringify(rendered.map((r) => r.payload));
    // Shown as written: nothing escaped away, nothing rewritten.
    for (const marker of MARKERS) expect(all, marker).toContain(JSON.stringify(marker).slice(1, -1));
  });

  it('digests of hostile events and credentials keep the same rule', () => {
    const alerts = [...Array.from({ length: 30 }, (_, i) => hostileAlerts()[i % 5] as DeliveryAlert)].map(
      (a, i) => ({ ...a, deliveryId: `${a.deliveryId}#${i}` }),
    );
    const rendered = renderTeams(alerts, renderOptions({ digest: { threshold: 5, maxItems: 100 } }));
    expect(rendered).toHaveLength(2);
    for (const r of rendered) expectTextRule(r.payload);
  });

  it('strips control and bidi characters and keeps every run on one line', () => {
    const spoof = '\u202Etxt.exe\u001b]0;owned\u0007\u001b[2J\u009b31m\u200e\u2066x\u2069\r\n\u2028!';
    const event = makeEvent({
      metadata: { type: `forum_post${spoof}`, uid: `forum_post/x${spoof}/1`, severity: 'high' },
      identifiers: [{ id: 1, name: `ceo${spoof}` }],
      tenant_metadata: { notes: `note${spoof}` },
      highlights: { [`f${spoof}`]: [`a${spoof}<mark>b${spoof}</mark>`] },
    });
    for (const r of renderTeams([toDelivery(eventAlert(event))], single)) {
      expectTextRule(r.payload);
      for (const leaf of leaves(r.payload)) expect(leaf.text).not.toMatch(/[\n\t]/);
    }
  });

  it('highlights are bolder runs; the header carries the effective severity; one Action.OpenUrl to the item', () => {
    const event = makeEvent({
      metadata: { uid: 'forum_post/darkforum/thread/1/post/2', severity: 'high' },
      tenant_metadata: { severity: { original: 'high', override: 'critical' } },
      highlights: { content: ['sold <mark>acme.test</mark> access'] },
    });
    const [r] = renderTeams([toDelivery(eventAlert(event))], single);
    const card = cardOf(r!);
    const runs = leaves(card.body).filter((l) => l.parent?.type === 'TextRun' && l.key === 'text');
    const bold = runs.find((l) => l.text === 'acme.test');
    expect(bold?.parent?.weight).toBe('Bolder');
    expect(runs.find((l) => l.text === 'sold ')?.parent?.weight).toBeUndefined();
    expect(JSON.stringify(card.body[0])).toContain('CRITICAL');
    expect(card.actions).toEqual([
      {
        type: 'Action.OpenUrl',
        title: 'Open in the web app',
        url: 'https://app.example.test/#/forum_post/darkforum/thread%2F1%2Fpost%2F2',
      },
    ]);
    const labels = card.body.filter((e) => e.type === 'TextBlock').map((e) => e.text);
    expect(labels).toEqual(['What matched', 'Who it concerns', 'Where it was found']);
    expect(r!.deliveryIds).toEqual([toDelivery(eventAlert(event)).deliveryId]);
  });
});

describe('Teams: size', () => {
  it('an item of emoji, quotes and backslashes, in every field, stays under 28,000 bytes, clipped with a note', () => {
    const heavy = '😀"\\é'.repeat(20_000);
    const event = makeEvent({
      metadata: { type: heavy, uid: `forum_post/${heavy}`, severity: 'high' },
      identifiers: Array.from({ length: 200 }, (_, i) => ({ id: i, name: `${i}${heavy.slice(0, 500)}` })),
      tenant_metadata: { tags: [heavy], notes: heavy },
      highlights: Object.fromEntries(
        Array.from({ length: 50 }, (_, i) => [`f${i}`, [`<mark>${heavy}</mark>`]]),
      ),
    });
    const [r] = renderTeams([toDelivery(eventAlert(event))], single);
    expectTextRule(r!.payload);
    expect(bytes(r!.payload)).toBeGreaterThan(20_000);
    const text = JSON.stringify(r!.payload);
    expect(text).toMatch(/truncated, [\d,]+ more characters/);
    expect(text).toMatch(/more highlights? not shown/);
  });

  it('a 1,000-item digest stays under the limit, lists what fits and counts the rest', () => {
    for (const maxItems of [20, 1_000]) {
      const alerts = Array.from({ length: 1_000 }, (_, i) => toDelivery(eventAlert(hostileEvent(i))));
      const [r, ...more] = renderTeams(alerts, renderOptions({ digest: { threshold: 5, maxItems } }));
      expect(more).toHaveLength(0);
      expect(r!.deliveryIds).toHaveLength(1_000);
      expectTextRule(r!.payload);
      const lines = cardOf(r!).body.filter(
        (e) => e.type === 'RichTextBlock' && JSON.stringify(e).match(/"(CRITICAL|HIGH)"/),
      );
      const rest = /… and (\d+) more items? not listed \(1000 in all\)/.exec(JSON.stringify(r!.payload));
      expect(rest, `maxItems ${maxItems}`).not.toBeNull();
      expect(lines.length + Number(rest?.[1])).toBe(1_000);
      expect(lines.length).toBeGreaterThan(maxItems === 20 ? 19 : 20);
      expect(lines.length).toBeLessThanOrEqual(maxItems);
    }
  });

  it('a 1,000-login credential digest stays under the limit too', () => {
    const alerts = Array.from({ length: 1_000 }, (_, i) => toDelivery(credentialAlert(hostileCredential(i))));
    const [r] = renderTeams(alerts, renderOptions({ digest: { threshold: 5, maxItems: 1_000 } }));
    expectTextRule(r!.payload);
    expect(JSON.stringify(r!.payload)).toMatch(/more items? not listed \(1000 in all\)/);
  });

  it('a 2,000-login group below the threshold is split into parts, each under the limit, covering each login once', () => {
    const alerts = Array.from({ length: 2_000 }, (_, i) =>
      toDelivery(credentialAlert(makeCredential({ identity_name: `user${i}@example.com`, source_id: 's1' }))),
    );
    const byId = new Map(alerts.map((a) => [a.deliveryId, a]));
    const rendered = renderTeams(alerts, renderOptions({ digest: { threshold: 5_000, maxItems: 20 } }));
    expect(rendered.length).toBeGreaterThan(1);
    const covered = rendered.flatMap((r) => r.deliveryIds);
    expect(covered.sort()).toEqual(alerts.map((a) => a.deliveryId).sort());
    for (const [i, r] of rendered.entries()) {
      expectTextRule(r.payload);
      const text = JSON.stringify(r.payload);
      expect(text).toContain(`(part ${i + 1} of ${rendered.length})`);
      // Every login it covers is listed in it.
      const missing = r.deliveryIds
        .map((id) => (byId.get(id)?.item as { identity_name?: string } | undefined)?.identity_name ?? id)
        .filter((login) => !text.includes(`"${login}"`));
      expect(missing).toEqual([]);
    }
  });
});

describe('Teams: passwords', () => {
  it('a credential card never shows the password, under any policy (even clear), only its kind', () => {
    for (const policy of ['clear', 'masked', 'hidden'] as const) {
      const item = applyPasswordPolicy(
        makeCredential({ hash: 'Hunter2-Secret!', hash_type: 'plaintext' }),
        policy,
      );
      for (const opts of [single, renderOptions({ digest: { threshold: 0, maxItems: 20 } })]) {
        const [r] = renderTeams([toDelivery(credentialAlert(item))], opts);
        const text = JSON.stringify(r!.payload);
        expect(text).not.toContain('Hunter2');
        expect(text).not.toContain('H*************!');
        expect(text).toContain('plaintext');
        expect(text).toContain('passwords are never sent to Teams');
      }
    }
  });
});

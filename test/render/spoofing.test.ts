/**
 * Display spoofing: upstream text carrying terminal escape sequences, C0/C1 controls and bidi
 * overrides reaches no destination that shows it (Slack, e-mail text and HTML, the terminal, Jira
 * and ServiceNow tickets), and
 * cannot forge a line where a renderer lays out one line per thing. The generic webhook sends the
 * item as data and keeps it byte for byte.
 */
import { describe, expect, it } from 'vitest';
import { renderConsole } from '../../lib/destinations/console/render.ts';
import type { EmailContent } from '../../lib/destinations/email/render.ts';
import { renderEmail } from '../../lib/destinations/email/render.ts';
import { renderJira } from '../../lib/destinations/jira/render.ts';
import { renderServiceNow } from '../../lib/destinations/servicenow/render.ts';
import type { SlackPayload } from '../../lib/destinations/slack/limits.ts';
import { renderSlack } from '../../lib/destinations/slack/render.ts';
import { renderWebhook } from '../../lib/destinations/webhook/render.ts';
import type { DeliveryAlert } from '../../lib/model.ts';
import { applyPasswordPolicy } from '../../lib/rules/passwords.ts';
import {
  credentialAlert,
  eventAlert,
  makeCredential,
  makeEvent,
  noticeTo,
  renderOptions,
  toDelivery,
} from './fixtures.ts';

/** RLO, an OSC retitle, a clear-screen CSI, the 8-bit CSI, every bidi control, NUL, BS, DEL, and each kind of line break. */
const SPOOF =
  '\u202Etxt.exe\u001b]0;owned\u0007\u001b[2J\u009b31m\u200e\u200f\u061c\u2066x\u2069\u202a\u202b\u202c\u202d\u0000\u0008\u007f\u0085\u2028\u2029\r\n\u000b\u000c!';
/** A person with a laptop: a zero-width joiner that must survive. */
const ZWJ = '👩\u200d💻';
/** Everything a shown text must not hold; `\n` and `\t` are checked separately, where one line is promised. */
const FORBIDDEN = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

/** One event and two credentials with `spoof` in every field a renderer shows. */
function items(spoof: string) {
  const event = makeEvent({
    metadata: {
      type: `forum_post${spoof}`,
      uid: `forum_post/dark${spoof}/thread/1`,
      severity: 'high',
      estimated_created_at: `2026-11-20${spoof}`,
      matched_at: `2026-11-21${spoof}`,
    },
    tenant_metadata: { tags: [`vip${spoof}`], notes: `note ${spoof} end` },
    identifiers: [{ id: 1, name: `acme${spoof}.test ${ZWJ}` }],
    highlights: {
      [`content${spoof}`]: [`before ${spoof} <mark>in${spoof}mark</mark> after ${spoof}`],
      title: [`<mark>${spoof}</mark>`],
    },
  });
  const credential = (n: number) =>
    applyPasswordPolicy(
      makeCredential({
        identity_name: `jane${n}${spoof}@example.com ${ZWJ}`,
        domain: `example${spoof}.com`,
        // Masking keeps the first and last character: an RLO there survives the policy.
        hash: `\u202Esecret${spoof}\u001b`,
        hash_type: `plain${spoof}`,
        source_id: `src${spoof}`,
        source: {
          id: 'src',
          name: `Leak ${spoof}`,
          breached_at: `2024${spoof}`,
          leaked_at: `2025${spoof}`,
        },
        event_uid: `leak/combo/${spoof}`,
      }),
      'masked',
    );
  const alerts: DeliveryAlert[] = [
    toDelivery(eventAlert(event)),
    toDelivery(credentialAlert(credential(1))),
    toDelivery(credentialAlert(credential(2))),
  ];
  return alerts;
}

const single = renderOptions({ digest: { threshold: 100, maxItems: 20 } });
const digest = renderOptions({ digest: { threshold: 1, maxItems: 20 } });

/** Every string in a payload, with its path. */
function strings(value: unknown, path = 'payload'): { path: string; text: string }[] {
  if (typeof value === 'string') return [{ path, text: value }];
  if (Array.isArray(value)) return value.flatMap((v, i) => strings(v, `${path}[${i}]`));
  if (value && typeof value === 'object')
    return Object.entries(value).flatMap(([k, v]) => strings(v, `${path}.${k}`));
  return [];
}

function expectClean(payload: unknown) {
  for (const { path, text } of strings(payload)) {
    const bad = FORBIDDEN.exec(text);
    expect(bad, `${path} holds U+${bad?.[0].codePointAt(0)?.toString(16)}`).toBeNull();
  }
}

const lineCount = (text: string) => text.split('\n').length;

describe('Slack', () => {
  for (const [what, opts] of [
    ['one message per event and per credential group', single],
    ['digests', digest],
  ] as const) {
    it(`${what}: no control or bidi character in any text, and the ZWJ stays`, () => {
      const rendered = renderSlack(items(SPOOF), opts);
      expect(rendered.length).toBeGreaterThan(0);
      for (const r of rendered) expectClean(r.payload);
      expect(JSON.stringify(rendered.map((r) => r.payload))).toContain(ZWJ);
    });
  }

  it('fields, context and the fallback text stay one line; only highlights and notes may break', () => {
    const [message] = renderSlack(items(SPOOF).slice(0, 1), single);
    const payload = message!.payload as SlackPayload;
    expect(payload.text).not.toMatch(/[\n\t]/);
    for (const block of payload.blocks) {
      for (const field of (block.fields as { text: string }[] | undefined) ?? []) {
        if (field.text.startsWith('*Notes*')) continue;
        expect(lineCount(field.text), field.text).toBe(2); // `*Label*\nvalue`
      }
      for (const element of (block.elements as { text: string }[] | undefined) ?? []) {
        expect(element.text).not.toMatch(/[\n\t]/);
      }
    }
  });

  it('a digest has one line per listed item, however many line breaks the items hold', () => {
    const lines = (spoof: string) =>
      renderSlack(items(spoof), digest).map((r) =>
        (r.payload as SlackPayload).blocks.map((b) => lineCount((b.text as { text?: string })?.text ?? '')),
      );
    expect(lines(SPOOF)).toEqual(lines('plain'));
  });
});

describe('e-mail', () => {
  for (const [what, opts] of [
    ['one mail per event and per credential group', single],
    ['digests', digest],
  ] as const) {
    it(`${what}: subject, text and HTML hold no control or bidi character`, () => {
      const rendered = renderEmail(items(SPOOF), opts);
      for (const r of rendered) {
        expectClean(r.payload);
        expect((r.payload as EmailContent).subject).not.toMatch(/[\n\t]/);
      }
      expect(rendered.map((r) => r.payload.html).join('')).toContain(ZWJ);
    });

    it(`${what}: the text part has as many lines as it would for harmless text`, () => {
      const lines = (spoof: string) => renderEmail(items(spoof), opts).map((r) => lineCount(r.payload.text));
      expect(lines(SPOOF)).toEqual(lines('plain'));
    });
  }
});

describe('console', () => {
  for (const [what, opts] of [
    ['one block per event and per credential group', single],
    ['digests', digest],
  ] as const) {
    it(`${what}: no escape sequence but its own colours, and no forged line`, () => {
      for (const color of [false, true]) {
        const rendered = renderConsole(items(SPOOF), { ...opts, color });
        for (const r of rendered) {
          // The renderer's own SGR codes are the only ESC allowed; everything else must be gone.
          expectClean(r.payload.replace(/\x1b\[(1|2|22|31|33|34|35|39)m/g, ''));
        }
        const lines = (spoof: string) =>
          renderConsole(items(spoof), { ...opts, color }).map((r) => lineCount(r.payload));
        expect(lines(SPOOF)).toEqual(lines('plain'));
      }
    });
  }

  it('a clear-text password with controls is shown without them', () => {
    const credential = makeCredential({ hash: `\u202Eexe.txt\u001b[2J` });
    const [out] = renderConsole([toDelivery(credentialAlert(credential))], { ...single, color: false });
    expect(out!.payload).toContain('exe.txt[2J');
    expectClean(out!.payload);
  });
});

describe('tickets', () => {
  for (const [what, opts] of [
    ['one ticket per item', single],
    ['digests', digest],
  ] as const) {
    it(`${what}, Jira: no control or bidi character, every text node one line, the summary one line`, () => {
      const rendered = renderJira(items(SPOOF), opts);
      expect(rendered.length).toBeGreaterThan(0);
      for (const r of rendered) {
        expectClean(r.payload);
        expect(r.payload.summary).not.toMatch(/[\n\t]/);
        for (const { path, text } of strings(r.payload.description)) expect(text, path).not.toMatch(/[\n\t]/);
      }
    });

    it(`${what}, ServiceNow: hash_type and every other value clean, as many lines as harmless text`, () => {
      const rendered = renderServiceNow(items(SPOOF), opts);
      for (const r of rendered) {
        expectClean(r.payload);
        expect(r.payload.short_description).not.toMatch(/[\n\t]/);
      }
      const lines = (spoof: string) =>
        renderServiceNow(items(spoof), opts).map((r) => lineCount(r.payload.description));
      expect(lines(SPOOF)).toEqual(lines('plain'));
    });
  }
});

describe('notices quoting a receiver', () => {
  it('Slack, e-mail, console, Jira and ServiceNow notices hold no control or bidi character', async () => {
    const notice = { kind: 'ops' as const, title: `refused ${SPOOF}`, text: `answered ${SPOOF}` };
    expectClean(await noticeTo({ type: 'slack' }, notice, single));
    expectClean(await noticeTo({ type: 'email' }, notice, single));
    expectClean(await noticeTo({ type: 'console' }, notice, single));
    expectClean(await noticeTo({ type: 'jira' }, notice, single));
    expectClean(await noticeTo({ type: 'servicenow' }, notice, single));
  });
});

describe('generic webhook', () => {
  it('sends the upstream items as data, unchanged', () => {
    const alerts = items(SPOOF);
    const bodies = renderWebhook(alerts, digest);
    expect(bodies.flatMap((b) => b.payload.items)).toEqual(alerts.map((a) => a.item));
    expect(JSON.stringify(bodies.map((b) => b.payload))).toContain('\u202Etxt.exe\\u001b]0;owned');
  });
});

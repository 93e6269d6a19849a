/** E-mail rendering: subject, text and HTML parts, escaping, grouping and digests. */
import { describe, expect, it } from 'vitest';
import { renderEmail } from '../../../lib/destinations/email/render.ts';
import {
  credentialAlert,
  eventAlert,
  makeCredential,
  makeEvent,
  renderOptions,
  toDelivery,
} from '../../render/fixtures.ts';
import { hostileCredential, hostileEvent } from '../../render/hostile.ts';

describe('renderEmail', () => {
  it('one event: subject with severity, type and count; both parts with highlights and link', () => {
    const item = makeEvent({
      metadata: { severity: 'low', type: 'paste', uid: 'paste/pastebin/x/y' },
      tenant_metadata: { severity: { override: 'high' } },
      highlights: { content: ['key for <mark>acme.test</mark>'] },
    });
    const [mail] = renderEmail([toDelivery(eventAlert(item))], renderOptions());
    expect(mail!.payload.subject).toBe('[HIGH] 1 paste event · acme.test');
    expect(mail!.payload.text).toContain('key for *acme.test*');
    expect(mail!.payload.text).toContain('https://app.example.test/#/paste/pastebin/x%2Fy');
    expect(mail!.payload.html).toContain('key for <mark>acme.test</mark>');
    expect(mail!.payload.html).toContain('<a href="https://app.example.test/#/paste/pastebin/x%2Fy">');
    expect(mail!.payload.text).toContain('high (upstream: low)');
  });

  it('HTML-escapes hostile upstream text and keeps the subject on one line', () => {
    const hostile = hostileEvent(3);
    hostile.metadata.type = 'paste\r\nBcc: victim@example.com';
    const [mail] = renderEmail([toDelivery(eventAlert(hostile))], renderOptions());
    expect(mail!.payload.subject).not.toMatch(/[\r\n]/);
    const html = mail!.payload.html;
    expect(html).not.toContain('<!channel>');
    expect(html).not.toContain('<https://evil.example');
    expect(html).toContain('&lt;!channel&gt;');
    expect(html).toContain('&amp;amp;');
    expect(html, 'the long highlight is bounded').toMatch(/truncated, [\d,]+ more characters/);
    expect(html.length).toBeLessThan(30_000);
    // Only our own tags: strip the known ones and no tag may remain.
    const stripped = html.replace(
      /<\/?(html|head|meta|body|h2|p|b|mark|table|tr|td|ul|li|a)\b[^<>]*>|<!doctype html>/gi,
      '',
    );
    expect(stripped).not.toMatch(/[<>]/);
  });

  it('a credential group lists every login, the leak and its dates, but no password', () => {
    const creds = [1, 2, 3].map((i) =>
      makeCredential({
        identity_name: `login${i}@example.com`,
        hash: `Password${i}xyz`,
        hash_type: 'plaintext',
      }),
    );
    const [mail] = renderEmail(
      creds.map((c) => toDelivery(credentialAlert(c))),
      renderOptions(),
    );
    expect(mail!.payload.subject).toBe(
      '[LEAKED CREDENTIALS] 3 leaked credentials: example.com (Collection #1)',
    );
    for (const part of [mail!.payload.text, mail!.payload.html]) {
      for (const i of [1, 2, 3]) expect(part).toContain(`login${i}@example.com`);
      expect(part).toContain('2026-01-01 00:00 UTC');
      expect(part).not.toContain('Password');
    }
  });

  it('escapes hostile leak names and logins in the HTML', () => {
    const [mail] = renderEmail([toDelivery(credentialAlert(hostileCredential(1)))], renderOptions());
    expect(mail!.payload.html).not.toContain('<!channel>');
    expect(mail!.payload.html).toContain('&lt;!channel&gt;user1@example.com');
  });

  it('over the threshold: one digest per kind, highest severity and types in the subject, maxItems listed', () => {
    const alerts = [
      ...Array.from({ length: 8 }, () => toDelivery(eventAlert(makeEvent({ metadata: { type: 'paste' } })))),
      toDelivery(eventAlert(makeEvent({ metadata: { severity: 'critical', type: 'ransomleak' } }))),
      toDelivery(credentialAlert(makeCredential())),
    ];
    const mails = renderEmail(alerts, renderOptions({ digest: { threshold: 5, maxItems: 4 } }));
    expect(mails).toHaveLength(2);
    expect(mails[0]!.payload.subject).toBe('[CRITICAL] 9 exposure events: paste, ransomleak');
    expect(mails[0]!.payload.text.match(/^- /gm)).toHaveLength(4);
    expect(mails[0]!.payload.text).toContain('… and 5 more items not listed (9 in all).');
    expect(mails[0]!.payload.text.indexOf('CRITICAL ransomleak')).toBeLessThan(
      mails[0]!.payload.text.indexOf('MEDIUM paste'),
    );
    expect(mails[1]!.payload.subject).toBe('[LEAKED CREDENTIALS] 1 leaked credential: example.com');
    expect(mails.flatMap((m) => m.deliveryIds).sort()).toEqual(alerts.map((a) => a.deliveryId).sort());
  });
});

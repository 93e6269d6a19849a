/** Terminal rendering: compact lines, ANSI only when asked, no escape sequences from upstream. */
import { describe, expect, it } from 'vitest';
import { consoleBody } from '../../../lib/destinations/console/body.ts';
import { consoleKind } from '../../../lib/destinations/console/index.ts';
import { renderConsole } from '../../../lib/destinations/console/render.ts';
import { applyPasswordPolicy } from '../../../lib/rules/passwords.ts';
import {
  credentialAlert,
  eventAlert,
  makeCredential,
  makeEvent,
  renderOptions,
  toDelivery,
} from '../../render/fixtures.ts';

const opts = (color: boolean, digest = { threshold: 5, maxItems: 20 }) => ({
  ...renderOptions({ digest }),
  color,
});

describe('renderConsole', () => {
  const item = makeEvent({
    metadata: { severity: 'high', type: 'stealer_log', uid: 'stealer_log/t/a/b' },
    tenant_metadata: { tags: ['vip'] },
    highlights: { content: ['creds for <mark>acme.test</mark>'] },
  });

  it('prints severity, type, identifiers, tags, the first highlight and the link', () => {
    const [out] = renderConsole([toDelivery(eventAlert(item))], opts(false));
    const text = out!.payload;
    expect(text.split('\n')[0]).toBe('[HIGH]  stealer_log  acme.test  #vip');
    expect(text).toContain('content: creds for *acme.test*');
    expect(text).toContain('https://app.example.test/#/stealer_log/t/a%2Fb');
    expect(text).not.toContain('\x1b');
  });

  it('shows the uid events ignore takes; for a tenants entry, <tenant>:<uid>', () => {
    const [top] = renderConsole([toDelivery(eventAlert(item))], opts(false));
    expect(top!.payload.split('\n')).toContain('  uid stealer_log/t/a/b');
    const initech = {
      ...eventAlert(item),
      key: `1003:${item.metadata.uid}`,
      tenant: { id: 1003, name: 'Initech' },
    };
    const [theirs] = renderConsole([toDelivery(initech)], opts(false));
    expect(theirs!.payload.split('\n')).toContain('  uid 1003:stealer_log/t/a/b');
    // In a digest too, on each event's line.
    const other = makeEvent({ metadata: { uid: 'paste/pb/x' } });
    const digest = renderConsole(
      [toDelivery(initech), toDelivery({ ...initech, item: other, key: '1003:paste/pb/x' })],
      opts(false, { threshold: 1, maxItems: 20 }),
    );
    expect(digest).toHaveLength(1);
    expect(digest[0]!.payload).toContain('[DIGEST]');
    expect(digest[0]!.payload).toContain('uid 1003:stealer_log/t/a/b');
    expect(digest[0]!.payload).toContain('uid 1003:paste/pb/x');
  });

  it('uses ANSI codes only when color is true, and bold for highlights', () => {
    const [out] = renderConsole([toDelivery(eventAlert(item))], opts(true));
    expect(out!.payload).toContain('\x1b[1m');
    expect(out!.payload).toContain('creds for \x1b[1macme.test\x1b[22m');
  });

  it('strips terminal escape sequences and line breaks from upstream text', () => {
    const hostile = makeEvent({
      metadata: { type: 'paste\x1b]0;pwned\x07' },
      identifiers: [{ id: 1, name: 'a\x1b[2Jb\nFAKE LINE' }],
      highlights: { content: ['x\x1b[31my\u202Ez'] },
    });
    const [out] = renderConsole([toDelivery(eventAlert(hostile))], opts(true));
    // Our own codes are ESC [ digits m; anything else with ESC came from upstream.
    expect(out!.payload.replace(/\x1b\[\d+m/g, '')).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f\u202e]/);
    expect(out!.payload).toContain('a[2Jb FAKE LINE');
  });

  it('shows the credential password as stored: masked, or hidden', () => {
    const credential = makeCredential({ identity_name: 'jane@example.com', hash: 'Summer2024!' });
    const masked = renderConsole(
      [toDelivery(credentialAlert(applyPasswordPolicy(credential, 'masked')))],
      opts(false),
    )[0]!.payload;
    expect(masked).toContain('jane@example.com  S*********!  (plaintext)');
    expect(masked).toContain('Collection #1');
    const hidden = renderConsole(
      [toDelivery(credentialAlert(applyPasswordPolicy(credential, 'hidden')))],
      opts(false),
    )[0]!.payload;
    expect(hidden).toContain('jane@example.com  (password hidden)');
  });

  it('digests over the threshold, listing maxItems and counting the rest', () => {
    const alerts = Array.from({ length: 7 }, () => toDelivery(eventAlert(makeEvent())));
    const rendered = renderConsole(alerts, opts(false, { threshold: 3, maxItems: 2 }));
    expect(rendered).toHaveLength(1);
    expect(rendered[0]!.payload).toContain('[DIGEST] 7 events: 7 medium');
    expect(rendered[0]!.payload).toContain('… and 5 more items not listed (7 in all)');
    expect(rendered[0]!.deliveryIds).toHaveLength(7);
  });
});

describe("the terminal's own options (its face's renderOptions)", () => {
  it('colours only when the run says the terminal takes them, as the body gets them', () => {
    const alerts = [toDelivery(eventAlert(makeEvent({ metadata: { severity: 'high' } })))];
    const terminal = { name: 'term', type: 'console' as const };
    const rendered = (color?: boolean) =>
      consoleBody.render(terminal, alerts, {
        ...renderOptions(),
        kindOptions: consoleKind.renderOptions?.({ color }),
      })[0]?.payload;
    expect(consoleKind.renderOptions?.({ color: true })).toEqual({ color: true });
    expect(rendered(true)).toContain('\x1b[');
    expect(rendered(false)).not.toContain('\x1b[');
    expect(rendered()).not.toContain('\x1b[');
  });
});

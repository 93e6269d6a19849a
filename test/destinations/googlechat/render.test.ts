/**
 * Google Chat rendering: upstream text only in card HTML, escaped, so the hostile samples and
 * `<users/all>`, `<a href>`, `*bold*`, `<https://evil|x>` and a bare URL show as written and do
 * nothing (checked by the renderer's own check and by the stand-in, which reads each message as
 * Google Chat would); never a `text`; every message within 32,000 bytes and 100 widgets whatever
 * the item (a 20,000-character title, a 1,000-item digest, a 2,000-login group); every item covered
 * exactly once; the tenant named; no password, not even masked; a digest with threads keyed
 * by its Idempotency-Key.
 */
import { describe, expect, it } from 'vitest';
import type { GoogleChatPayload } from '../../../lib/destinations/googlechat/card.ts';
import { googleChatProblems } from '../../../lib/destinations/googlechat/limits.ts';
import { googleChatNotice } from '../../../lib/destinations/googlechat/render.ts';
import { webhookIdempotencyKey } from '../../../lib/render/keys.ts';
import { TEST_MARK } from '../../../lib/render/notice.ts';
import { sampleHostileEvent } from '../../../lib/render/samples.ts';
import type { DeliveryAlert, Rendered, RenderOptions } from '../../../lib/render/types.ts';
import { applyPasswordPolicy } from '../../../lib/rules/passwords.ts';
import { startGoogleChat } from '../../helpers/googlechat.ts';
import {
  credentialAlert,
  eventAlert,
  makeCredential,
  makeEvent,
  NOW,
  renderOptions,
  renderTo,
  toDelivery,
} from '../../render/fixtures.ts';
import { HOSTILE, hostileCredential, hostileEvent } from '../../render/hostile.ts';

const LIVE = [
  '<users/all>',
  '<users/123>',
  '<a href="https://evil.example">x</a>',
  '*bold*',
  '<https://evil|x>',
];
const WILD = `${LIVE.join(' ')} _i_ ~s~ \`code\` https://evil.example/path <b>b</b> &amp; ${HOSTILE}`;

function wildEvent(i = 0, over: Parameters<typeof makeEvent>[0] = {}) {
  return makeEvent({
    metadata: { type: `forum_post ${LIVE[0]}`, uid: `forum_post/gc/${i}<users/all>`, severity: 'high' },
    identifiers: [{ id: 1, name: WILD }],
    tenant_metadata: { tags: [LIVE[1] as string], notes: `line one\n${WILD}` },
    highlights: {
      content: [`${WILD} <mark>${LIVE[0]} *x*</mark>`],
      [LIVE[2] as string]: [`<mark>${WILD}</mark>`],
    },
    ...over,
  });
}

const render = (alerts: DeliveryAlert[], opts: RenderOptions, threads = false) =>
  renderTo({ type: 'googlechat', threads }, alerts, opts) as Promise<Rendered<GoogleChatPayload>[]>;
const payloads = (rendered: Rendered<GoogleChatPayload>[]) =>
  rendered.flatMap((r) => [r.payload, ...(r.thread ?? [])]);
const bytes = (p: unknown) => Buffer.byteLength(JSON.stringify(p));
const widgets = (p: GoogleChatPayload) =>
  p.cardsV2[0].card.sections.reduce((n, s) => n + s.widgets.length, 0);

/** Every card text as a reader sees it: our tags out, entities resolved. */
function shown(p: GoogleChatPayload): string {
  const texts: string[] = [];
  for (const s of p.cardsV2[0].card.sections)
    for (const w of s.widgets) {
      if ('textParagraph' in w) texts.push(w.textParagraph.text);
      if ('decoratedText' in w) texts.push(w.decoratedText.text);
    }
  return texts
    .join('\n')
    .replace(/<br>/g, '\n')
    .replace(/<[^>]*>/g, '')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');
}

/** Every message within the limits and the invariant, by our check and by the stand-in's reading. */
async function expectSafe(list: GoogleChatPayload[]) {
  const chat = await startGoogleChat({ intervalMs: 0 });
  try {
    for (const p of list) {
      expect(googleChatProblems(p)).toEqual([]);
      expect(bytes(p)).toBeLessThanOrEqual(32_000);
      expect(widgets(p)).toBeLessThanOrEqual(100);
      expect(p).not.toHaveProperty('text');
      const res = await fetch(chat.url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json; charset=UTF-8' },
        body: JSON.stringify(p),
      });
      expect(res.status, await res.text()).toBe(200);
    }
    expect(chat.live).toEqual([]);
  } finally {
    await chat.close();
  }
}

describe('Google Chat rendering', () => {
  const single = renderOptions({ digest: { threshold: 100, maxItems: 20 } });

  it('upstream text is escaped card HTML: no mention, link or format comes alive, and it reads as written', async () => {
    const rendered = await render(
      [
        toDelivery(eventAlert(wildEvent())),
        toDelivery(eventAlert(hostileEvent())),
        toDelivery(eventAlert(sampleHostileEvent(NOW))),
        toDelivery(credentialAlert(hostileCredential())),
      ],
      single,
    );
    expect(rendered).toHaveLength(4);
    await expectSafe(payloads(rendered));
    const wild = rendered[0]?.payload as GoogleChatPayload;
    const json = JSON.stringify(wild);
    for (const raw of ['<users/', '<a ', '<https://', '://evil']) expect(json).not.toContain(raw);
    expect(json).toContain('&lt;users/all&gt;');
    expect(json).toContain('&lt;a href=&quot;https[:]//evil.example&quot;&gt;x&lt;/a&gt;');
    // A reader sees the text as written, a URL defanged, the highlight in bold.
    expect(shown(wild)).toContain(WILD.replaceAll('://', '[:]//'));
    expect(shown(wild)).toContain('forum_post <users/all>');
    expect(JSON.stringify(wild)).toContain('<b>&lt;users/all&gt; *x*</b>');
    // The card's title and labels are ours.
    expect(wild.cardsV2[0].card.header.title).toBe('HIGH · exposure event');
  });

  it('no control, bidi or invisible character, no lone surrogate; an emoji intact', async () => {
    const odd = 'exa\u200bmple.com \u202etxt.exe \u001b[31m so\u00adc \ud800 👩‍💻';
    const event = makeEvent({
      identifiers: [{ id: 1, name: odd }],
      highlights: { content: [`<mark>${odd}</mark>`] },
    });
    const text = JSON.stringify(payloads(await render([toDelivery(eventAlert(event))], single)));
    expect(text).not.toMatch(/[\u0000-\u001f\u00ad\u200b\u202e\u2060\ufeff]|\\u00/);
    expect(text).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])/);
    expect(text).toContain('example.com txt.exe [31m soc \ufffd 👩‍💻');
  });

  it('links only with an openLink button of our own label, never to a javascript: URL', async () => {
    const [ok, bad] = await render(
      [
        toDelivery(
          eventAlert(makeEvent({ metadata: { uid: 'forum_post/darkforum/thread/9', flare_url: undefined } })),
        ),
        toDelivery(eventAlert(hostileEvent(3))),
      ],
      single,
    );
    const buttonsOf = (p: GoogleChatPayload) =>
      p.cardsV2[0].card.sections.flatMap((s) =>
        s.widgets.flatMap((w) => ('buttonList' in w ? w.buttonList.buttons : [])),
      );
    expect(buttonsOf(ok?.payload as GoogleChatPayload)).toEqual([
      {
        text: 'Open in the web app',
        onClick: { openLink: { url: 'https://app.example.test/#/forum_post/darkforum/thread%2F9' } },
      },
    ]);
    // The hostile event's flare_url is javascript:; the link falls back to the uid's.
    const [hostile] = buttonsOf(bad?.payload as GoogleChatPayload);
    expect(hostile?.onClick.openLink.url).toMatch(/^https:\/\/app\.example\.test\/#\/forum_post\//);
  });

  it('a 20,000-character title, huge highlights, emoji and quotes: within 32,000 bytes, clipped with a note', async () => {
    const long = 'T'.repeat(20_000);
    const event = wildEvent(1, {
      metadata: { type: long, uid: `x/y/${'"'.repeat(5_000)}`, severity: 'critical' },
      highlights: Object.fromEntries(
        Array.from({ length: 40 }, (_, i) => [`f${i}`, [`${'😀"&<'.repeat(3_000)} <mark>m</mark>`]]),
      ),
      identifiers: Array.from({ length: 500 }, (_, i) => ({ id: i, name: `${'é'.repeat(200)}${i}` })),
    });
    const [r] = await render([toDelivery(eventAlert(event))], single);
    const p = r?.payload as GoogleChatPayload;
    await expectSafe([p]);
    expect(JSON.stringify(p)).not.toContain('T'.repeat(300));
    expect(shown(p)).toMatch(/more highlights? not shown/);
  });

  it('digests within the limits: 1,000 events and 2,000 logins, each item counted exactly once', async () => {
    const events = Array.from({ length: 1_000 }, (_, i) => toDelivery(eventAlert(wildEvent(i))));
    const logins = Array.from({ length: 2_000 }, (_, i) => toDelivery(credentialAlert(hostileCredential(i))));
    for (const threads of [false, true]) {
      const opts = renderOptions({ digest: { threshold: 1, maxItems: 1_000 } });
      const rendered = await render([...events, ...logins], opts, threads);
      expect(rendered).toHaveLength(2);
      const ids = rendered.flatMap((r) => r.deliveryIds).sort();
      expect(ids).toEqual([...events, ...logins].map((a) => a.deliveryId).sort());
      await expectSafe(payloads(rendered));
      if (!threads) {
        expect(shown(rendered[0]?.payload as GoogleChatPayload)).toMatch(
          /… and \d+ more items not listed \(1000 in all\)/,
        );
        expect(shown(rendered[1]?.payload as GoogleChatPayload)).toMatch(
          /… and \d+ more items not listed \(2000 in all\)/,
        );
      }
    }
  });

  it('a large group of logins is split into numbered parts, each listing exactly its logins', async () => {
    const logins = Array.from({ length: 2_000 }, (_, i) =>
      toDelivery(
        credentialAlert(makeCredential({ identity_name: `someone.with.a.long.name.${i}@example.com` })),
      ),
    );
    const rendered = await render(logins, renderOptions({ digest: { threshold: 10_000, maxItems: 20 } }));
    expect(rendered.length).toBeGreaterThan(1);
    await expectSafe(payloads(rendered));
    for (const [i, r] of rendered.entries()) {
      const text = shown(r.payload);
      const listed = [...text.matchAll(/someone\.with\.a\.long\.name\.\d+@example\.com/g)].map((m) => m[0]);
      expect(listed).toHaveLength(r.deliveryIds.length);
      expect(r.payload.cardsV2[0].card.header.subtitle).toBe(`part ${i + 1} of ${rendered.length}`);
    }
    expect(rendered.flatMap((r) => r.deliveryIds)).toEqual(logins.map((a) => a.deliveryId));
  });

  it('no password in a card, not even masked, under any policy: the login and the kind of secret', async () => {
    const credential = makeCredential({ hash: 'Summer2024!' });
    const text = async (policy: 'masked' | 'hidden' | 'clear') =>
      JSON.stringify(
        payloads(
          await render([toDelivery(credentialAlert(applyPasswordPolicy(credential, policy)))], single),
        ),
      );
    for (const policy of ['masked', 'hidden', 'clear'] as const) {
      const shown = await text(policy);
      expect(shown).toContain(credential.identity_name);
      expect(shown).not.toContain('Summer2024!');
      expect(shown).not.toContain('S*********!');
      expect(shown).not.toMatch(/password/i);
    }
  });

  it("names a tenant entry's tenant, escaped, in every card", async () => {
    const tenant = { id: 42, name: 'Acme <users/all>' };
    const rendered = await render(
      [
        { ...toDelivery(eventAlert(makeEvent())), tenant },
        { ...toDelivery(credentialAlert(makeCredential())), tenant },
      ],
      single,
    );
    for (const r of rendered) expect(shown(r.payload)).toContain('Tenant: Acme <users/all> (42)');
    await expectSafe(payloads(rendered));
  });

  it('with threads, a digest is a parent and replies keyed by its Idempotency-Key; every item once', async () => {
    const events = Array.from({ length: 300 }, (_, i) => toDelivery(eventAlert(wildEvent(i))));
    const [r] = await render(events, renderOptions({ digest: { threshold: 1, maxItems: 20 } }), true);
    const key = webhookIdempotencyKey('soc', r?.deliveryIds ?? []);
    expect(r?.payload.thread).toEqual({ threadKey: key });
    expect(r?.thread?.length).toBeGreaterThan(1);
    for (const reply of r?.thread ?? []) expect(reply.thread).toEqual({ threadKey: key });
    const all = payloads([r as Rendered<GoogleChatPayload>])
      .map(shown)
      .join('\n');
    for (const e of events) {
      const uid = e.kind === 'event' ? e.item.metadata.uid : '';
      expect(all.split(uid).length - 1, uid).toBe(1);
    }
    expect(shown(r?.payload as GoogleChatPayload)).toContain('… and 280 more events in the thread.');
    // Without threads: one message, no thread key.
    const [flat] = await render(events, renderOptions({ digest: { threshold: 1, maxItems: 20 } }));
    expect(flat?.thread).toBeUndefined();
    expect(flat?.payload).not.toHaveProperty('thread');
  });

  it('a notice: the test mark first, in the title; its text escaped', async () => {
    const notice = googleChatNotice(
      { kind: 'test', title: 'Destination check', text: 'Hello <users/all>\nsecond line' },
      single,
      false,
    );
    expect(notice.cardsV2[0].card.header.title).toBe(TEST_MARK);
    expect(shown(notice)).toContain('Hello <users/all>\nsecond line');
    await expectSafe([
      notice,
      googleChatNotice({ kind: 'ops', title: 'refused', text: 'HTTP 403 <a href=x>' }, single, true),
    ]);
    expect(
      googleChatNotice({ kind: 'test', title: 't', text: 'x' }, single, true).thread?.threadKey,
    ).toBeTruthy();
  });

  it('the checks are not blind: text, a raw mention, a link, a title with markup are each caught', async () => {
    const [r] = await render([toDelivery(eventAlert(makeEvent()))], single);
    const base = r?.payload as GoogleChatPayload;
    const withText = { ...base, text: 'hi' } as GoogleChatPayload;
    const tampered = (text: string) =>
      ({
        ...base,
        cardsV2: [
          {
            ...base.cardsV2[0],
            card: { ...base.cardsV2[0].card, sections: [{ widgets: [{ textParagraph: { text } }] }] },
          },
        ],
      }) as GoogleChatPayload;
    const titled = {
      ...base,
      cardsV2: [{ ...base.cardsV2[0], card: { ...base.cardsV2[0].card, header: { title: 'a <b>' } } }],
    } as GoogleChatPayload;
    const bad = [
      withText,
      tampered('<users/all>'),
      tampered('<a href="https://x">x</a>'),
      tampered('https://x'),
      tampered('a & b'),
      titled,
    ];
    for (const p of bad)
      expect(googleChatProblems(p).length, JSON.stringify(p).slice(0, 200)).toBeGreaterThan(0);
    const chat = await startGoogleChat({ intervalMs: 0 });
    for (const p of bad)
      await fetch(chat.url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(p),
      });
    expect(chat.live).toHaveLength(bad.length);
    await chat.close();
  });
});

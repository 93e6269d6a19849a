/**
 * Mattermost rendering: upstream text only in code spans, whatever it holds (the hostile samples,
 * and what Mattermost itself would act on: `@channel`, `<!channel>`, `<!here|x>`, `<@U123>`,
 * `<https://evil|click>`, `![x](https://evil/img.png)`, a bare URL, backticks, `\@all`,
 * `&#64;all`, `#hashtag`, `:emoji:`, a 20,000-character title), checked two ways: by the
 * renderer's own `mattermostProblems`, and by the stand-in's `wouldBeLive`, written apart from it
 * as the server and the apps read a post. Every post within 16,383 characters; digests, credential
 * parts and notices; no password under any policy. And its face: one pace per server, shared by
 * the webhooks on it; a webhook URL written in the config warned about without being repeated.
 */
import { describe, expect, it } from 'vitest';
import { resolveDestinations } from '../../../lib/deliver/destinations.ts';
import { paceFor } from '../../../lib/deliver/pace.ts';
import { mattermostKind } from '../../../lib/destinations/mattermost/index.ts';
import { LINK_LABEL } from '../../../lib/destinations/mattermost/markdown.ts';
import {
  type MattermostPayload,
  mattermostNotice,
  mattermostProblems,
  renderMattermost,
} from '../../../lib/destinations/mattermost/render.ts';
import type { DeliveryAlert } from '../../../lib/model.ts';
import { TEST_MARK } from '../../../lib/render/notice.ts';
import { sampleHostileEvent } from '../../../lib/render/samples.ts';
import { applyPasswordPolicy } from '../../../lib/rules/passwords.ts';
import { wouldBeLive } from '../../helpers/mattermost.ts';
import { configFrom } from '../../helpers/world.ts';
import {
  credentialAlert,
  eventAlert,
  makeCredential,
  makeEvent,
  NOW,
  renderOptions,
  toDelivery,
} from '../../render/fixtures.ts';
import { hostileCredential, hostileEvent } from '../../render/hostile.ts';

const LIVE = [
  '@channel',
  '@all @here @jane.doe',
  '<!channel>',
  '<!here|x>',
  '<@U123>',
  '<https://evil.example|click>',
  '![x](https://evil/img.png)',
  '[x](https://evil)',
  'https://evil.example',
  '`code` ``double`` ```fence```',
  '\\@all',
  '&#64;all &commat;here',
  '#hashtag ~town-square :skull: **bold** _it_ ~~del~~ | a | b |',
];
const WILD = LIVE.join(' ');
const D = { name: 'soc', type: 'mattermost' as const, url: 'https://chat.example.test/hooks/x' };
const single = renderOptions({ digest: { threshold: 100, maxItems: 20 } });
const TENANT = { id: 7, name: `Acme ${WILD}` };

function wildEvent(i = 0) {
  return makeEvent({
    metadata: { type: `forum_post ${WILD}`, uid: `forum_post/md/${i} ${WILD}`, severity: 'high' },
    identifiers: [{ id: 1, name: WILD }],
    tenant_metadata: { tags: [WILD, 'vip'], notes: `# notes\n\n${WILD}\n\`\`\`\n${WILD}` },
    highlights: {
      content: [`${WILD} <mark>${WILD}</mark> after`],
      [WILD]: [`<mark>${WILD}</mark>`],
    },
  });
}

/** What a reader sees in the code spans: the look-alikes turned back. */
const shown = (text: string) =>
  [...text.matchAll(/`([^`]+)`/g)]
    .map((m) => m[1])
    .join(' ')
    .replace(/\u02cb/g, '`')
    .replace(/‹/g, '<')
    .replace(/›/g, '>')
    .replace(/\u2217/g, '*');

function expectHarmless(payload: MattermostPayload) {
  expect(mattermostProblems(payload)).toEqual([]);
  expect(wouldBeLive(payload.text)).toEqual([]);
  expect([...payload.text].length).toBeLessThanOrEqual(16_383);
}

describe('Mattermost rendering', () => {
  it('puts every piece of hostile upstream text in code spans, shown as it was', () => {
    const alerts = [wildEvent(), hostileEvent(), sampleHostileEvent(NOW)].map((item) => ({
      ...toDelivery(eventAlert(item)),
      tenant: TENANT,
    }));
    const rendered = renderMattermost(D, alerts, single);
    expect(rendered).toHaveLength(3);
    for (const r of rendered) expectHarmless(r.payload);
    const text = rendered[0]?.payload.text ?? '';
    // Each of them, whole, in what a reader sees; none of them outside a span.
    for (const live of LIVE) expect(shown(text)).toContain(live.replace(/\s+/g, ' '));
    const outside = text.replace(/`[^`]+`/g, '').replace(/\n\[[^\n]*$/, '');
    for (const mark of ['@', '<', '&', '\\', '://', ':skull', '~', '_', '|'])
      expect(outside).not.toContain(mark);
    expect(text.split('\n')[0]).toMatch(/^#### HIGH · `Acme /);
    expect(text).toContain('**`');
  });

  it('links to the item on the last line only, with our own words, never to a javascript: URL', () => {
    const [hostile] = renderMattermost(D, [toDelivery(eventAlert(hostileEvent()))], single);
    const last = hostile?.payload.text.split('\n').at(-1) ?? '';
    expect(last).toMatch(new RegExp(`^\\[${LINK_LABEL}\\]\\(https://app\\.example\\.test/#/forum_post/`));
    const odd = 'https://app.flare.test/x?q=a)b](https://evil)`c\\d';
    const [plain] = renderMattermost(
      D,
      [toDelivery(eventAlert(makeEvent({ metadata: { flare_url: odd } })))],
      single,
    );
    expect(plain?.payload.text.split('\n').at(-1)).toBe(
      `[${LINK_LABEL}](https://app.flare.test/x?q=a%29b%5D%28https://evil%29%60c%5Cd)`,
    );
    expectHarmless(plain?.payload as MattermostPayload);
  });

  it('a 20,000-character title and long text in every field: one post within 16,383, clipped with a note', () => {
    const long = `${'(@channel <!here>) `x` '.repeat(900)} ✓ "quoted" \\ back`;
    const item = makeEvent({
      metadata: { type: 'T'.repeat(20_000), uid: `forum_post/x/${long}` },
      identifiers: Array.from({ length: 300 }, (_, i) => ({ id: i, name: `${long.slice(0, 300)}${i}` })),
      tenant_metadata: { tags: Array.from({ length: 200 }, () => long.slice(0, 100)), notes: long },
      highlights: Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`field ${i}`, [long, long]])),
    });
    const [r] = renderMattermost(D, [toDelivery(eventAlert(item))], single);
    expectHarmless(r?.payload as MattermostPayload);
    const text = r?.payload.text ?? '';
    expect(text.split('\n')[0]).toMatch(/^#### MEDIUM · `T{180}` … \(19820 more characters\)$/);
    expect(text).toMatch(/… and \d+ more highlights, not shown\n/);
    expect(text.length).toBeGreaterThan(12_000);
  });

  it('a 1,000-event digest lists what fits, counts the rest, and covers every item once', () => {
    const alerts = Array.from({ length: 1_000 }, (_, i) => ({
      ...toDelivery(eventAlert(hostileEvent(i))),
      tenant: TENANT,
    }));
    const rendered = renderMattermost(
      D,
      alerts,
      renderOptions({ digest: { threshold: 5, maxItems: 1_000 } }),
    );
    expect(rendered).toHaveLength(1);
    const r = rendered[0];
    expect(r?.deliveryIds).toHaveLength(1_000);
    expectHarmless(r?.payload as MattermostPayload);
    const text = r?.payload.text ?? '';
    const listed = text.split('\n').filter((l) => l.startsWith('- ')).length;
    expect(listed).toBeGreaterThan(20);
    expect(text).toContain(`… and ${1_000 - listed} more, not listed`);
    expect(text.split('\n')[0]).toMatch(
      /^#### `Acme .*` … \(\d+ more characters\) · 1000 new events \(200 critical, 800 high\)$/,
    );
    const capped = renderMattermost(
      D,
      alerts.slice(0, 30),
      renderOptions({ digest: { threshold: 5, maxItems: 10 } }),
    );
    expect(capped[0]?.payload.text.split('\n').filter((l) => l.startsWith('- '))).toHaveLength(10);
    expect(capped[0]?.payload.text).toContain('… and 20 more, not listed');
  });

  it('a 2,000-login group is split into numbered parts, each login in exactly one, every part within the limit', () => {
    const alerts = Array.from({ length: 2_000 }, (_, i) => toDelivery(credentialAlert(hostileCredential(i))));
    const rendered = renderMattermost(
      D,
      alerts,
      renderOptions({ digest: { threshold: 5_000, maxItems: 20 } }),
    );
    expect(rendered.length).toBeGreaterThan(1);
    expect(rendered.flatMap((r) => r.deliveryIds).sort()).toEqual(alerts.map((a) => a.deliveryId).sort());
    for (const [i, r] of rendered.entries()) {
      expectHarmless(r.payload);
      expect(r.payload.text.split('\n')[0]).toContain(`(part ${i + 1} of ${rendered.length})`);
      expect(r.payload.text.split('\n').filter((l) => l.startsWith('- '))).toHaveLength(r.deliveryIds.length);
    }
  });

  it('a credential digest counts domains and leaks, lists logins, never a password, under any policy', () => {
    for (const policy of ['masked', 'hidden', 'clear'] as const) {
      const items = Array.from({ length: 8 }, () =>
        applyPasswordPolicy(makeCredential({ hash: 'Secr3t!pass', hash_type: 'password' }), policy),
      );
      const alerts: DeliveryAlert[] = items.map((c) => toDelivery(credentialAlert(c)));
      for (const threshold of [5, 100]) {
        const rendered = renderMattermost(D, alerts, renderOptions({ digest: { threshold, maxItems: 20 } }));
        const text = JSON.stringify(rendered);
        expect(text).not.toContain('Secr3t');
        expect(text).not.toContain('S*********s');
        expect(text).toContain('(`password`)');
        for (const r of rendered) expectHarmless(r.payload);
      }
    }
  });

  it('channel and username go into the payload when configured, and only then', () => {
    const [plain] = renderMattermost(D, [toDelivery(eventAlert(makeEvent()))], single);
    expect(Object.keys(plain?.payload ?? {})).toEqual(['text']);
    const [set] = renderMattermost(
      { ...D, channel: 'town-square', username: 'Exposure alerts' },
      [toDelivery(eventAlert(makeEvent()))],
      single,
    );
    expect(set?.payload).toMatchObject({ channel: 'town-square', username: 'Exposure alerts' });
  });

  it('notices: a test marked first thing; a quoted error stays text', () => {
    const test = mattermostNotice(
      D,
      { kind: 'test', title: `Check ${WILD}`, text: `Hello\n\n${WILD}` },
      single,
    );
    expect(test.text.startsWith(`#### \`${TEST_MARK}\``)).toBe(true);
    expectHarmless(test);
    const ops = mattermostNotice(D, { kind: 'ops', title: 'refused', text: `HTTP 400 ${WILD}` }, single);
    expect(ops.text).toMatch(/^#### exposure-alerts · `refused`/);
    expectHarmless(ops);
  });

  it('random text from the riskiest pieces, in every field, never goes live (500 seeded items)', () => {
    const pieces = [
      '`',
      '``',
      '*',
      '**',
      '_',
      '~',
      '<',
      '>',
      '[',
      '](',
      '!',
      '@',
      '#',
      ':',
      '&#64;',
      '\\',
      '|',
    ];
    pieces.push(
      '\n',
      '\n\n',
      ' ',
      '\t',
      '\u200b',
      '\u202e',
      '\ud83d\ude00',
      '\ud800',
      'all',
      'channel',
      'here',
    );
    pieces.push(
      'https://',
      'www.',
      'evil.example',
      '<mark>',
      '</mark>',
      '<!channel>',
      '<@U1>',
      '<a|b>',
      '   ',
    );
    let seed = 42;
    const next = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed;
    };
    const wild = () => Array.from({ length: next() % 12 }, () => pieces[next() % pieces.length]).join('');
    const alerts: DeliveryAlert[] = [];
    for (let i = 0; i < 500; i++) {
      const item = makeEvent({
        metadata: { type: wild(), uid: `t/o/${i}${wild()}`, flare_url: `https://x.example/${wild()}` },
        identifiers: [
          { id: 1, name: wild() },
          { id: 2, name: wild() },
        ],
        tenant_metadata: { tags: [wild()], notes: wild() },
        highlights: { [wild()]: [wild(), `${wild()}<mark>${wild()}</mark>${wild()}`] },
      });
      alerts.push({ ...toDelivery(eventAlert(item)), tenant: { id: 1, name: wild() } });
      const login = makeCredential({
        identity_name: wild(),
        domain: wild(),
        source_id: wild(),
        hash_type: wild(),
      });
      alerts.push(toDelivery(credentialAlert(login)));
    }
    const rendered = [
      ...renderMattermost(D, alerts, single),
      ...renderMattermost(D, alerts, renderOptions({ digest: { threshold: 5, maxItems: 300 } })),
    ];
    for (const r of rendered) {
      expect(mattermostProblems(r.payload), r.payload.text).toEqual([]);
      expect(wouldBeLive(r.payload.text), r.payload.text).toEqual([]);
    }
  });

  it('mattermostProblems and the stand-in both find what would be live or split', () => {
    const cases = [
      'hi @channel',
      'see <!here>',
      'a `span left open',
      'an empty `` span',
      '[click](https://evil)',
      'https://evil.example',
      `\`a\`\n\n\`b ${'x'.repeat(20_000)}\``,
      '**`a ** b`** c',
    ];
    for (const text of cases) {
      expect(mattermostProblems({ text }), text).not.toEqual([]);
      if (text.length < 16_383) expect(wouldBeLive(text), text).not.toEqual([]);
    }
    expect(mattermostProblems({ text: `\`${'x'.repeat(16_400)}\`` }).join()).toMatch(/over 16,383/);
    // The same text in a span of its own is harmless, but for the server's rewrites of `<`.
    for (const live of LIVE.filter((l) => !/[`<]/.test(l)))
      expect(wouldBeLive(`\`${live}\``), live).toEqual([]);
  });
});

describe('the Mattermost face', () => {
  it('one post every 200 ms per server: webhooks of one server share it, another server does not', () => {
    const hook = (host: string, id: string) => ({ type: 'mattermost', url: { secret: `${host}-${id}` } });
    const config = configFrom({
      destinations: { a: hook('one', 'a'), b: hook('one', 'b'), elsewhere: hook('two', 'c') },
      routes: [{ name: 'all', to: ['a', 'b', 'elsewhere'] }],
    });
    const resolved = resolveDestinations(config, {
      'one-a': 'https://chat.one.example/hooks/aaa',
      'one-b': 'https://chat.one.example/hooks/bbb',
      'two-c': 'https://chat.two.example/hooks/ccc',
    });
    expect(['a', 'b', 'elsewhere'].map((n) => paceFor(resolved.get(n) as never))).toEqual([400, 400, 200]);
  });

  it('a webhook URL written in the config is warned about, without repeating it', () => {
    const url = 'https://chat.example/hooks/abc123';
    const [warning] = mattermostKind.warnings?.({ type: 'mattermost', url }, 'destinations.chat') ?? [];
    expect(warning).toMatch(/^destinations\.chat\.url: .*keep it in the secret object/);
    expect(warning).not.toContain('abc123');
    expect(mattermostKind.warnings?.({ type: 'mattermost', url: { secret: 'x' } }, 'd')).toEqual([]);
    expect(mattermostKind.describe({ type: 'mattermost', url })).not.toContain('abc123');
  });
});

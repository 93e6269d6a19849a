/**
 * Discord rendering: upstream text Markdown-escaped wherever Discord renders Markdown (the hostile
 * samples, plus `@everyone`, `<@123>`, `[x](https://evil)` and `||spoiler||`), shown literally once
 * Discord strips the escapes; `allowed_mentions: {"parse": []}` on every message; every embed
 * within Discord's limits whatever the item (a 1,000-item digest, a 2,000-login group, long and
 * punctuation-heavy text); and no password, under any policy.
 */
import { describe, expect, it } from 'vitest';
import { discordNotice } from '../../../lib/destinations/discord/body.ts';
import { type DiscordEmbed, discordProblems, embedChars } from '../../../lib/destinations/discord/limits.ts';
import { renderDiscord } from '../../../lib/destinations/discord/render.ts';
import { sampleHostileEvent } from '../../../lib/render/samples.ts';
import { applyPasswordPolicy } from '../../../lib/rules/passwords.ts';
import {
  credentialAlert,
  eventAlert,
  makeCredential,
  makeEvent,
  NOW,
  renderOptions,
  toDelivery,
} from '../../render/fixtures.ts';
import { HOSTILE, hostileCredential, hostileEvent } from '../../render/hostile.ts';

const LIVE = ['@everyone', '<@123>', '[x](https://evil)', '||spoiler||'];
const WILD = `${LIVE.join(' ')} **bold** # heading > quote -# small :skull: https://evil.example ${HOSTILE}`;
const single = renderOptions({ digest: { threshold: 100, maxItems: 20 } });

function wildEvent(i = 0) {
  return makeEvent({
    metadata: { type: `forum_post ${LIVE[0]}`, uid: `forum_post/md/${i}||x||`, severity: 'high' },
    identifiers: [{ id: 1, name: WILD }],
    tenant_metadata: { tags: [LIVE[2] as string], notes: `# notes\n${WILD}` },
    highlights: {
      content: [`${WILD} <mark>${LIVE[1]} ||s||</mark>`],
      [LIVE[3] as string]: [`<mark>${WILD}</mark>`],
    },
  });
}

/** What Discord shows for Markdown text: the escapes resolved (`\\x` shows `x`), `**` gone. */
function shown(text: string): string {
  return text.replace(/\*\*/g, '').replace(/\\(.)/g, '$1');
}

function texts(embed: DiscordEmbed): string[] {
  return [embed.title, embed.description ?? '', ...(embed.fields ?? []).map((f) => f.value)];
}

describe('Discord rendering', () => {
  it('escapes every mention, link, spoiler and Markdown mark of upstream text, and shows it literally', () => {
    const rendered = renderDiscord(
      [
        toDelivery(eventAlert(wildEvent())),
        toDelivery(eventAlert(hostileEvent())),
        toDelivery(eventAlert(sampleHostileEvent(NOW))),
      ],
      single,
    );
    expect(rendered).toHaveLength(3);
    for (const r of rendered) {
      expect(r.payload.allowed_mentions).toEqual({ parse: [] });
      expect(discordProblems(r.payload)).toEqual([]);
    }
    const embed = rendered[0]?.payload.embeds[0] as DiscordEmbed;
    const all = texts(embed).join('\n');
    // With every escaped character taken out, nothing that could ping, link or hide is left.
    const bare = all.replace(/\\./g, '');
    for (const mark of ['@', '<', '[', '](', '||', '#', '://']) expect(bare).not.toContain(mark);
    expect(all).toContain('\\@everyone');
    expect(all).toContain('\\<\\@123\\>');
    expect(all).toContain('\\[x\\]\\(https\\:\\/\\/evil\\)');
    expect(all).toContain('\\|\\|spoiler\\|\\|');
    // What a reader sees is the text as it was, and the highlight in bold.
    expect(shown(embed.description ?? '')).toContain(WILD);
    expect(embed.description).toContain('**\\<\\@123\\> \\|\\|s\\|\\|**');
    expect(shown(embed.title)).toBe('HIGH · forum_post @everyone');
  });

  it('links the title only to the item, never to a javascript: URL from the upstream', () => {
    const [hostile] = renderDiscord([toDelivery(eventAlert(hostileEvent()))], single);
    expect(hostile?.payload.embeds[0]?.url).toMatch(/^https:\/\/app\.example\.test\/#\/forum_post\//);
    const [plain] = renderDiscord(
      [toDelivery(eventAlert(makeEvent({ metadata: { flare_url: 'https://app.flare.test/x' } })))],
      single,
    );
    expect(plain?.payload.embeds[0]?.url).toBe('https://app.flare.test/x');
  });

  it('an item of long, punctuation-heavy text in every field stays within every limit, clipped with a note', () => {
    const long = `${'(@everyone)'.repeat(2_000)} ✓ "quoted" \\ back`;
    const item = makeEvent({
      metadata: { type: long, uid: `forum_post/x/${long}` },
      identifiers: Array.from({ length: 300 }, (_, i) => ({ id: i, name: `${long.slice(0, 300)}${i}` })),
      tenant_metadata: { tags: Array.from({ length: 200 }, () => long.slice(0, 100)), notes: long },
      highlights: Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`field ${i}`, [long, long]])),
    });
    const [r] = renderDiscord([toDelivery(eventAlert(item))], single);
    const embed = r?.payload.embeds[0] as DiscordEmbed;
    expect(discordProblems(r?.payload as never)).toEqual([]);
    expect(embedChars(embed)).toBeLessThanOrEqual(6_000);
    expect(embed.description).toMatch(/more highlights? not shown\)$/);
  });

  it('a 1,000-item digest lists what fits within 6,000 characters and counts the rest', () => {
    const alerts = Array.from({ length: 1_000 }, (_, i) => toDelivery(eventAlert(hostileEvent(i))));
    const rendered = renderDiscord(alerts, renderOptions({ digest: { threshold: 5, maxItems: 1_000 } }));
    expect(rendered).toHaveLength(1);
    const r = rendered[0];
    expect(r?.deliveryIds).toHaveLength(1_000);
    expect(discordProblems(r?.payload as never)).toEqual([]);
    const description = r?.payload.embeds[0]?.description ?? '';
    const listed = description.split('\n').filter((l) => l.startsWith('•')).length;
    expect(listed).toBeGreaterThan(5);
    expect(description).toContain(`… and ${1_000 - listed} more, not listed`);
    expect(r?.payload.embeds[0]?.title).toBe('1000 new events (200 critical, 800 high)');
  });

  it('maxItems caps a digest list, and the rest are counted', () => {
    const alerts = Array.from({ length: 30 }, (_, i) =>
      toDelivery(eventAlert(makeEvent({ metadata: { uid: `t/o/${i}` } }))),
    );
    const [r] = renderDiscord(alerts, renderOptions({ digest: { threshold: 5, maxItems: 10 } }));
    const description = r?.payload.embeds[0]?.description ?? '';
    expect(description.split('\n').filter((l) => l.startsWith('•'))).toHaveLength(10);
    expect(description).toContain('… and 20 more, not listed');
  });

  it('a 2,000-login group below the threshold is split into parts within the limits, covering each login once', () => {
    const alerts = Array.from({ length: 2_000 }, (_, i) => toDelivery(credentialAlert(hostileCredential(i))));
    const rendered = renderDiscord(alerts, renderOptions({ digest: { threshold: 5_000, maxItems: 20 } }));
    expect(rendered.length).toBeGreaterThan(1);
    const covered = rendered.flatMap((r) => r.deliveryIds);
    expect(covered.sort()).toEqual(alerts.map((a) => a.deliveryId).sort());
    for (const [i, r] of rendered.entries()) {
      expect(discordProblems(r.payload)).toEqual([]);
      const embed = r.payload.embeds[0] as DiscordEmbed;
      expect(embed.title).toContain(`(part ${i + 1} of ${rendered.length})`);
      expect((embed.description ?? '').split('\n')).toHaveLength(r.deliveryIds.length);
    }
  });

  it('a credential embed never shows the password, under any policy (even clear), only its kind', () => {
    for (const policy of ['masked', 'hidden', 'clear'] as const) {
      const item = applyPasswordPolicy(
        makeCredential({ hash: 'Secr3t!pass', hash_type: 'password' }),
        policy,
      );
      const rendered = renderDiscord(
        [toDelivery(credentialAlert(item))],
        renderOptions({ digest: { threshold: 5, maxItems: 20 } }),
      );
      const text = JSON.stringify(rendered);
      expect(text).not.toContain('Secr3t');
      expect(text).not.toContain('S*********s');
      expect(text).toContain('(password)');
    }
  });

  it('notices: a test is marked first thing, an error quoted in a notice is escaped', () => {
    const test = discordNotice({ kind: 'test', title: 'Destination check', text: 'Hello @everyone' }, single);
    expect(test.embeds[0]?.title).toContain('TEST');
    expect(discordProblems(test)).toEqual([]);
    const ops = discordNotice(
      { kind: 'ops', title: 'refused', text: 'HTTP 401 <@123> [x](https://evil)' },
      single,
    );
    expect(discordProblems(ops)).toEqual([]);
    expect(ops.allowed_mentions).toEqual({ parse: [] });
  });

  it('discordProblems finds a live mention, a missing allowed_mentions and an over-long field', () => {
    const problems = discordProblems({
      embeds: [
        { title: 'x', description: 'hi @everyone', fields: [{ name: 'a', value: 'y'.repeat(1_025) }] },
      ],
      allowed_mentions: { parse: ['everyone'] },
    });
    expect(problems.join('\n')).toMatch(/allowed_mentions/);
    expect(problems.join('\n')).toMatch(/live Markdown/);
    expect(problems.join('\n')).toMatch(/1,024/);
  });
});

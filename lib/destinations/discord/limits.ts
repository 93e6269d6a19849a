/**
 * A Discord webhook message's shape and Discord's limits on it: what `render.ts` builds within, and
 * what `discordProblems` checks (`config validate`, the tests, the stand-in).
 */

/** One Discord embed, as built here (within DISCORD_LIMITS). */
export interface DiscordEmbed {
  title: string;
  url?: string;
  description?: string;
  color?: number;
  fields?: { name: string; value: string; inline?: boolean }[];
  footer?: { text: string };
  timestamp?: string;
}

/** Body of a Discord webhook POST: embeds, and never a mention (`allowed_mentions`). */
export interface DiscordPayload {
  content?: string;
  embeds: DiscordEmbed[];
  allowed_mentions: { parse: string[] };
}

/** Discord's limits on a webhook message (docs/destinations/discord.md), in characters. */
export const DISCORD_LIMITS = {
  content: 2_000,
  embeds: 10,
  title: 256,
  description: 4_096,
  fields: 25,
  fieldName: 256,
  fieldValue: 1_024,
  footer: 2_048,
  /** Title, description, field names and values and footer of all embeds together. */
  total: 6_000,
} as const;

/** What an embed counts toward Discord's 6,000 characters. */
export function embedChars(embed: DiscordEmbed): number {
  let n = embed.title.length + (embed.description?.length ?? 0) + (embed.footer?.text.length ?? 0);
  for (const f of embed.fields ?? []) n += f.name.length + f.value.length;
  return n;
}

/** Markdown that would be live in text Discord renders: a mention, a masked link, a spoiler. */
const LIVE = /(^|[^\\])(@everyone|@here|<@|<#|\]\(|\|\|)/;

/**
 * What Discord would refuse, or what would be live in a message: `config validate` and the tests
 * use it. Upstream text is always escaped, so a live mention or link means an escape was missed.
 */
export function discordProblems(payload: DiscordPayload): string[] {
  const problems: string[] = [];
  if (!Array.isArray(payload.allowed_mentions?.parse) || payload.allowed_mentions.parse.length)
    problems.push('allowed_mentions must be {"parse": []}');
  if ((payload.content?.length ?? 0) > DISCORD_LIMITS.content) problems.push('content over 2,000 characters');
  if (!payload.embeds.length && !payload.content) problems.push('neither content nor an embed');
  if (payload.embeds.length > DISCORD_LIMITS.embeds) problems.push('more than 10 embeds');
  let total = 0;
  for (const [i, e] of payload.embeds.entries()) {
    const where = `embeds[${i}]`;
    total += embedChars(e);
    if (!e.title || e.title.length > DISCORD_LIMITS.title)
      problems.push(`${where}.title: 1 to 256 characters`);
    if ((e.description?.length ?? 0) > DISCORD_LIMITS.description)
      problems.push(`${where}.description: over 4,096 characters`);
    if ((e.footer?.text.length ?? 0) > DISCORD_LIMITS.footer)
      problems.push(`${where}.footer: over 2,048 characters`);
    if ((e.fields?.length ?? 0) > DISCORD_LIMITS.fields) problems.push(`${where}: more than 25 fields`);
    for (const f of e.fields ?? []) {
      if (!f.name || f.name.length > DISCORD_LIMITS.fieldName)
        problems.push(`${where}: a field name of 1 to 256`);
      if (!f.value || f.value.length > DISCORD_LIMITS.fieldValue)
        problems.push(`${where}.fields[${f.name}]: a value of 1 to 1,024 characters`);
    }
    for (const text of [e.title, e.description ?? '', ...(e.fields ?? []).map((f) => f.value)])
      if (LIVE.test(text)) problems.push(`${where}: live Markdown (a mention, a masked link or a spoiler)`);
  }
  if (total > DISCORD_LIMITS.total) problems.push(`the embeds hold ${total} characters, over 6,000`);
  return problems;
}

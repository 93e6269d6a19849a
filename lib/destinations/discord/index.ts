/**
 * Discord through a webhook: embeds within Discord's limits, no mention ever parsed, one message
 * every 2 s per webhook, and the `X-RateLimit-*` headers honoured.
 */
import * as z from 'zod/mini';
import { httpUrl, secretOr } from '../../rules/schema-parts.ts';
import type { KindBody, KindFace } from '../kind.ts';
import type { DiscordDestination } from './types.ts';

/** A Discord webhook: its URL holds the webhook's token, so it is a secret. */
export const discordSchema = z.strictObject({
  type: z.literal('discord'),
  url: secretOr(httpUrl),
});
export type DiscordConfig = z.infer<typeof discordSchema>;

export const discordKind: KindFace<DiscordConfig, DiscordDestination> = {
  type: 'discord',
  title: 'Discord',
  schema: discordSchema,
  resolve: (name, config, get) => ({ name, type: 'discord', url: get(config.url, 'url') }),
  // Within its 5 in 2 s, and its channel's 30 a minute.
  pace: (d) => ({ everyMs: 2_000, sharedBy: `discord ${d.url}` }),
  describe: () => 'POST to the Discord webhook (its URL holds its token, not shown), one message every 2 s',
  warnings: (config, path) =>
    typeof config.url === 'string'
      ? [
          `${path}.url: a Discord webhook URL holds the webhook's token, so anyone who has it can post: keep it in the secret object ({ "secret": "NAME" })`,
        ]
      : [],
  docs: async () => (await import('./docs.ts')).docs,
  load: async (): Promise<KindBody<DiscordDestination>> => (await import('./body.ts')).discordBody,
};

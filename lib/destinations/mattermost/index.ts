/**
 * Mattermost through an incoming webhook: Markdown posts where upstream text sits only in code
 * spans (so it can neither mention, link, embed nor format), within 16,383 characters a post.
 *
 * Pace: one post every 200 ms per Mattermost server, shared by every destination posting to that
 * server. Its rate limit, when an admin turns it on, counts requests per client address across the
 * whole server (10 a second, bursts of 100, by default), not per webhook: two webhooks of one
 * server share it, so the server, not the URL, is what destinations share. Five a second leaves
 * half the limit to everything else we or our neighbours send; a 429 still pauses the destination
 * for its `Retry-After`.
 */
import * as z from 'zod/mini';
import { httpUrl, secretOr } from '../../rules/schema-parts.ts';
import type { KindBody, KindFace } from '../kind.ts';
import type { MattermostDestination } from './types.ts';

/** A channel's name as in its URL (`town-square`, `#town-square`), or `@user` for a direct message. */
const channel = z
  .string()
  .check(
    z.regex(
      /^(@[a-z0-9._-]{1,64}|#?[a-z0-9_-]{1,64})$/,
      "expected a channel's name as in its URL (town-square) or @username: lower case, digits, - and _",
    ),
  );

export const mattermostSchema = z.strictObject({
  type: z.literal('mattermost'),
  url: secretOr(httpUrl),
  channel: z.optional(channel),
  username: z.optional(
    z.string().check(z.regex(/^[^\p{C}]{1,64}$/u, 'expected a name of 1 to 64 printable characters')),
  ),
});
export type MattermostConfig = z.infer<typeof mattermostSchema>;

/** The server a webhook URL posts to: what shares its rate limit. */
function serverOf(url: string): string {
  return URL.canParse(url) ? new URL(url).origin : url;
}

export const mattermostKind: KindFace<MattermostConfig, MattermostDestination> = {
  type: 'mattermost',
  title: 'Mattermost',
  schema: mattermostSchema,
  resolve: (name, config, get) => ({
    name,
    type: 'mattermost',
    url: get(config.url, 'url'),
    ...(config.channel ? { channel: config.channel } : {}),
    ...(config.username ? { username: config.username } : {}),
  }),
  pace: (d) => ({ everyMs: 200, sharedBy: `mattermost ${serverOf(d.url)}` }),
  describe: (config) =>
    `POST to the Mattermost incoming webhook (its URL is a secret, not shown)${config.channel ? `, to ${config.channel}` : ''}, one post every 200 ms per server`,
  warnings: (config, path) =>
    typeof config.url === 'string'
      ? [
          `${path}.url: a Mattermost incoming webhook URL lets anyone who has it post: keep it in the secret object ({ "secret": "NAME" })`,
        ]
      : [],
  docs: async () => (await import('./docs.ts')).docs,
  load: async (): Promise<KindBody<MattermostDestination>> => (await import('./body.ts')).mattermostBody,
};

/**
 * Google Chat through a space's incoming webhook: a card per event, credential group or digest
 * (with `threads`, a digest's items as replies under it), upstream text only where it stays text,
 * at most one message a second per space, shared by every destination that names the space.
 */
import * as z from 'zod/mini';
import { httpUrl, secretOr } from '../../rules/schema-parts.ts';
import type { KindBody, KindFace } from '../kind.ts';
import type { GoogleChatDestination } from './types.ts';

/**
 * A space's incoming webhook: its URL holds the webhook's key and token, so it is a secret.
 * `threads`: a digest's items go as replies in the digest's thread (off by default).
 */
export const googlechatSchema = z.strictObject({
  type: z.literal('googlechat'),
  url: secretOr(httpUrl),
  threads: z.optional(z.boolean()),
});
export type GoogleChatConfig = z.infer<typeof googlechatSchema>;

/** The space a webhook URL posts to (`spaces/AAAA…`), from its path; undefined when it names none. */
export function spaceOf(url: string): string | undefined {
  if (!URL.canParse(url)) return undefined;
  return /^\/v1\/(spaces\/[^/]+)\/messages\/?$/.exec(new URL(url).pathname)?.[1];
}

/** Whether `url` has the shape of an incoming webhook: a space's messages, with key and token. */
function looksLikeWebhook(url: string): boolean {
  if (!spaceOf(url)) return false;
  const query = new URL(url).searchParams;
  return Boolean(query.get('key') && query.get('token'));
}

export const googlechatKind: KindFace<GoogleChatConfig, GoogleChatDestination> = {
  type: 'googlechat',
  title: 'Google Chat',
  schema: googlechatSchema,
  resolve: (name, config, get) => ({
    name,
    type: 'googlechat',
    url: get(config.url, 'url'),
    threads: config.threads ?? false,
  }),
  // Google Chat allows a space 60 messages a minute, whoever sends them: every webhook of one space
  // shares that, so the pace is shared by the space, not by the URL.
  pace: (d) => ({ everyMs: 1_000, sharedBy: `googlechat ${spaceOf(d.url) ?? d.url}` }),
  threads: (d) => d.threads,
  describe: (config) =>
    `POST to the Google Chat space's incoming webhook (its URL holds the webhook's key and token, not shown), one message a second per space${config.threads ? '; a digest is a thread, its items replies under it' : ''}`,
  warnings: (config, path) => {
    if (typeof config.url !== 'string') return [];
    return [
      `${path}.url: a Google Chat webhook URL holds its key and token, so anyone who has it can post: keep it in the secret object ({ "secret": "NAME" })`,
      ...(looksLikeWebhook(config.url)
        ? []
        : [
            `${path}.url: not the form of a Google Chat incoming webhook (https://chat.googleapis.com/v1/spaces/<space>/messages?key=…&token=…): Google Chat will refuse it, and its pace cannot be shared with the space's other webhooks`,
          ]),
    ];
  },
  docs: async () => (await import('./docs.ts')).docs,
  load: async (): Promise<KindBody<GoogleChatDestination>> => (await import('./body.ts')).googlechatBody,
};

/** What each key of this kind's config means: the config reference and `config schema` read it. */
import type { KeyDoc } from '../kind.ts';

export const docs: Record<string, KeyDoc> = {
  url: {
    text: 'the space’s incoming webhook URL (`https://chat.googleapis.com/v1/spaces/<space>/messages?key=…&token=…`); it holds the webhook’s key and token, so keep it in the secret object',
    example: { secret: 'socGoogleChatWebhook' },
  },
  threads: {
    text: 'send a digest as a thread: a short parent, its items as replies under it (default false: one message listing what fits)',
    example: true,
  },
};

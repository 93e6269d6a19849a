/** What each key of this kind's config means: the config reference and `config schema` read it. */
import type { KeyDoc } from '../kind.ts';

export const docs: Record<string, KeyDoc> = {
  url: {
    text: 'the incoming webhook’s URL (`https://<your Mattermost>/hooks/<id>`); whoever has it can post, so keep it in the secret object',
    example: { secret: 'socMattermostWebhook' },
  },
  channel: {
    text: 'post to this channel (its name as in its URL) or `@user` instead of the webhook’s own channel, if the webhook may (default: the webhook’s channel)',
    example: 'security-alerts',
  },
  username: {
    text: 'the name posts show, if the server lets webhooks override it (default: the webhook’s)',
    example: 'Exposure alerts',
  },
};

/** What each key of this kind's config means: the config reference and `config schema` read it. */
import type { KeyDoc } from '../kind.ts';

export const docs: Record<string, KeyDoc> = {
  url: {
    text: 'the channel’s Workflows webhook URL; it carries its signature, so keep it in the secret object',
    example: { secret: 'socTeamsWebhook' },
  },
};

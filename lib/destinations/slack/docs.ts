/** What each key of this kind's config means: the config reference and `config schema` read it. */
import { SECRET_OR } from '../describe.ts';
import type { KeyDoc } from '../kind.ts';

export const docs: Record<string, KeyDoc> = {
  url: {
    text: `the webhook form: the Slack incoming webhook URL, itself a credential (${SECRET_OR}); or give token and channel instead`,
    example: { secret: 'socSlackWebhook' },
  },
  token: {
    text: `the app form: the Slack app's bot token (xoxb-…, scope chat:write), with channel; the app can edit what it posted and reply in its threads (${SECRET_OR})`,
    example: { secret: 'socSlackBotToken' },
  },
  channel: {
    text: 'the app form: the channel, by its id (C…, in the channel details) or its name (#soc); invite the bot to it',
    example: 'C0123ABCD',
  },
  apiUrl: {
    text: 'the app form: the Slack Web API (default https://slack.com/api)',
    example: 'https://slack.com/api',
  },
};

/**
 * Slack in one of two forms: an incoming webhook (`url`), or an app's bot token posting to a
 * channel (`token` and `channel`), which can also edit what it posted, reply in its threads, and
 * so send a digest as a thread. About one message a second.
 */
import * as z from 'zod/mini';
import { nonEmpty } from '../../rules/match-schema.ts';
import { httpUrl, secretOr } from '../../rules/schema-parts.ts';
import { baseUrl } from '../describe.ts';
import type { KindBody, KindFace } from '../kind.ts';
import type { SlackDestination, SlackOptions } from './types.ts';

export const SLACK_API_URL = 'https://slack.com/api';

/**
 * A Slack channel: its id (C…, G… or D…, shown in its details), or its name (`#soc`). Either is
 * posted to; `chat.update` takes only ids, which every answer gives, so the answer's is kept.
 */
const slackChannel = z
  .string()
  .check(
    z.regex(
      /^([CGD][A-Z0-9]{6,}|#[a-z0-9][a-z0-9._-]{0,79})$/,
      'expected a Slack channel id such as C0123ABCD (its details show it) or a name such as #soc',
    ),
  );

export const slackSchema = z
  .strictObject({
    type: z.literal('slack'),
    url: z.optional(secretOr(httpUrl)),
    token: z.optional(secretOr(nonEmpty)),
    channel: z.optional(slackChannel),
    apiUrl: z.optional(httpUrl),
  })
  .check(
    z.superRefine((d, ctx) => {
      const app = d.token !== undefined || d.channel !== undefined || d.apiUrl !== undefined;
      if (d.url !== undefined && app)
        ctx.addIssue({
          code: 'custom',
          path: ['url'],
          message: 'give url (an incoming webhook) or token and channel (a Slack app), not both',
          input: d,
        });
      else if (d.url === undefined && (d.token === undefined || d.channel === undefined))
        ctx.addIssue({
          code: 'custom',
          path: [d.token === undefined ? 'token' : 'channel'],
          message: 'expected url (an incoming webhook), or token and channel (a Slack app)',
          input: d,
        });
    }),
  );
export type SlackConfig = z.infer<typeof slackSchema>;

export const slackKind: KindFace<SlackConfig, SlackDestination, SlackOptions> = {
  type: 'slack',
  title: 'Slack',
  schema: slackSchema,
  resolve(name, config, get) {
    if (config.url !== undefined) return { name, type: 'slack', url: get(config.url, 'url') };
    const apiUrl = baseUrl(config.apiUrl ?? SLACK_API_URL);
    const app = { token: get(config.token ?? '', 'token'), channel: config.channel ?? '', apiUrl };
    return { name, type: 'slack', url: `${apiUrl}/chat.postMessage`, app };
  },
  pace: () => ({ everyMs: 1_000 }),
  followUps: (d) => (d.app ? 'message' : undefined),
  threads: (d) => d.app !== undefined,
  renderOptions: (run) => ({ buttons: !!run.actions?.slack }),
  channel: ({ channel }) => (channel?.startsWith('#') ? undefined : channel),
  describe: (config) =>
    config.token
      ? `chat.postMessage to ${config.channel} as the Slack app (its bot token is a credential, not shown); a digest is a thread, follow-ups edit the message and reply in its thread`
      : 'POST to the Slack incoming webhook (its URL is a credential, not shown)',
  docs: async () => (await import('./docs.ts')).docs,
  load: async (): Promise<KindBody<SlackDestination, unknown, unknown, SlackOptions>> =>
    (await import('./body.ts')).slackBody,
};

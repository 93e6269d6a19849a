/**
 * A generic webhook: a POST of exactly the documented JSON body, with an `Idempotency-Key` stable
 * for the same items and destination, signed with HMAC-SHA256 when it has a `signingSecret`. It
 * receives every item (no digest), sent while polling.
 */
import * as z from 'zod/mini';
import { nonEmpty } from '../../rules/match-schema.ts';
import { httpUrl, secretOr } from '../../rules/schema-parts.ts';
import { urlText } from '../describe.ts';
import type { KindBody, KindFace } from '../kind.ts';

export const webhookSchema = z.strictObject({
  type: z.literal('webhook'),
  url: secretOr(httpUrl),
  signingSecret: z.optional(secretOr(nonEmpty)),
  headers: z.optional(
    z.record(z.string().check(z.regex(/^[A-Za-z0-9-]+$/, 'expected a header name')), secretOr(z.string())),
  ),
  /** Also POST a body of kind `action` when someone acts on an item it was sent (default false). */
  followUps: z.optional(z.boolean()),
});
export type WebhookConfig = z.infer<typeof webhookSchema>;

export interface WebhookDestination {
  name: string;
  type: 'webhook';
  url: string;
  signingSecret?: string;
  headers: Record<string, string>;
  /** Hears of actions on what it was sent (deliver/follow-up.ts). */
  followUps?: boolean;
}

export const webhookKind: KindFace<WebhookConfig, WebhookDestination> = {
  type: 'webhook',
  title: 'a webhook',
  schema: webhookSchema,
  resolve: (name, config, get) => ({
    name,
    type: 'webhook',
    url: get(config.url, 'url'),
    ...(config.followUps ? { followUps: true } : {}),
    ...(config.signingSecret !== undefined
      ? { signingSecret: get(config.signingSecret, 'signingSecret') }
      : {}),
    headers: Object.fromEntries(
      Object.entries(config.headers ?? {}).map(([header, value]) => [
        header,
        get(value, `headers.${header}`),
      ]),
    ),
  }),
  inline: true,
  followUps: (d) => (d.followUps ? 'action' : undefined),
  describe: (config) => `POST ${urlText(config.url)}`,
  docs: async () => (await import('./docs.ts')).docs,
  load: async (): Promise<KindBody<WebhookDestination>> => (await import('./body.ts')).webhookBody,
};

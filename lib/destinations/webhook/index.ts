/**
 * A generic webhook: a POST of exactly the documented JSON body, with an `Idempotency-Key` stable
 * for the same items and destination, signed with HMAC-SHA256 when it has a `signingSecret`. It
 * receives every item (no digest), sent while polling.
 */
import { urlText } from '../describe.ts';
import type { KindBody, KindFace } from '../kind.ts';
import { type WebhookConfig, type WebhookDestination, webhookSchema } from './types.ts';

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

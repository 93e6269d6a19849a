/**
 * What a webhook destination is configured as and resolves to: its face (index.ts) and body share
 * them (the body shows the config in `preview`), so neither imports the other.
 */
import * as z from 'zod/mini';
import { nonEmpty } from '../../rules/match-schema.ts';
import { httpUrl, secretOr } from '../../rules/schema-parts.ts';

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

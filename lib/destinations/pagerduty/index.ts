/**
 * PagerDuty's Events API v2: an event per item (a digest: one for the digest) with a stable
 * `dedup_key`, so a repeat joins its incident; at most 120 events a minute per routing key.
 */
import * as z from 'zod/mini';
import { nonEmpty } from '../../rules/match-schema.ts';
import { httpUrl, secretOr } from '../../rules/schema-parts.ts';
import { urlText } from '../describe.ts';
import type { KindBody, KindFace } from '../kind.ts';
import type { PagerDutySeverity } from './render.ts';

export const PAGERDUTY_URL = 'https://events.pagerduty.com/v2/enqueue';

/** `url` is overridable so tests and the emulator world can stand in for it. */
export const pagerdutySchema = z.strictObject({
  type: z.literal('pagerduty'),
  routingKey: secretOr(nonEmpty),
  url: z.optional(httpUrl),
  /** The PagerDuty severity of a leaked credential (events map theirs by severity). */
  credentialSeverity: z._default(z.enum(['critical', 'error', 'warning', 'info']), 'error'),
});
export type PagerDutyConfig = z.infer<typeof pagerdutySchema>;

export interface PagerDutyDestination {
  name: string;
  type: 'pagerduty';
  url: string;
  routingKey: string;
  credentialSeverity: PagerDutySeverity;
}

export const pagerdutyKind: KindFace<PagerDutyConfig, PagerDutyDestination> = {
  type: 'pagerduty',
  title: 'PagerDuty',
  schema: pagerdutySchema,
  resolve: (name, config, get) => ({
    name,
    type: 'pagerduty',
    url: config.url ?? PAGERDUTY_URL,
    routingKey: get(config.routingKey, 'routingKey'),
    credentialSeverity: config.credentialSeverity,
  }),
  pace: (d) => ({ everyMs: 500, sharedBy: `pagerduty ${d.routingKey}` }),
  followUps: () => 'incident',
  describe: (config) => `PagerDuty Events API v2: POST ${urlText(config.url ?? PAGERDUTY_URL)}`,
  docs: async () => (await import('./docs.ts')).docs,
  load: async (): Promise<KindBody<PagerDutyDestination, unknown, PagerDutyConfig>> =>
    (await import('./body.ts')).pagerdutyBody,
};

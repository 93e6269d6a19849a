/**
 * PagerDuty's Events API v2: an event per item (a digest: one for the digest) with a stable
 * `dedup_key`, so a repeat joins its incident; at most 120 events a minute per routing key.
 */
import { urlText } from '../describe.ts';
import type { KindBody, KindFace } from '../kind.ts';
import { type PagerDutyConfig, type PagerDutyDestination, pagerdutySchema } from './types.ts';

export const PAGERDUTY_URL = 'https://events.pagerduty.com/v2/enqueue';

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

/**
 * What a PagerDuty destination is configured as and resolves to: its face (index.ts) and body
 * share them (the body shows the config in `preview`), so neither imports the other.
 */
import * as z from 'zod/mini';
import { nonEmpty } from '../../rules/match-schema.ts';
import { httpUrl, secretOr } from '../../rules/schema-parts.ts';

/** PagerDuty's severities, which its events carry. */
export type PagerDutySeverity = 'critical' | 'error' | 'warning' | 'info';

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

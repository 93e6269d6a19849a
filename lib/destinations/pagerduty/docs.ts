/** What each key of this kind's config means: the config reference and `config schema` read it. */
import { SECRET_OR } from '../describe.ts';
import type { KeyDoc } from '../kind.ts';

export const docs: Record<string, KeyDoc> = {
  routingKey: {
    text: `the Events API v2 integration key: ${SECRET_OR}`,
    example: { secret: 'oncallRoutingKey' },
  },
  url: {
    text: 'the Events API endpoint (default https://events.pagerduty.com/v2/enqueue)',
    example: 'https://events.eu.pagerduty.com/v2/enqueue',
  },
  credentialSeverity: {
    text: 'the PagerDuty severity of a leaked credential: critical, error, warning or info',
    example: 'critical',
  },
};

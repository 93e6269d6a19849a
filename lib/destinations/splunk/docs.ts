/** What each key of this kind's config means: the config reference and `config schema` read it. */
import { SECRET_OR } from '../describe.ts';
import type { KeyDoc } from '../kind.ts';

export const docs: Record<string, KeyDoc> = {
  url: {
    text: 'the HTTP Event Collector’s base URL (the path /services/collector/event is added)',
    example: 'https://splunk.example.com:8088',
  },
  token: {
    text: `the HEC token (${SECRET_OR})`,
    example: { secret: 'splunkHecToken' },
  },
  index: {
    text: 'the index events go to (default: the token’s)',
    example: 'security',
  },
  sourcetype: {
    text: 'the events’ sourcetype (default `exposure_alerts`)',
    example: 'exposure_alerts',
  },
};

/** What each key of this kind's config means: the config reference and `config schema` read it. */
import { SECRET_OR } from '../describe.ts';
import type { KeyDoc } from '../kind.ts';

export const docs: Record<string, KeyDoc> = {
  tenantId: {
    text: 'the Entra tenant (directory) id',
    example: '00000000-0000-0000-0000-000000000000',
  },
  clientId: {
    text: 'the app registration’s client id',
    example: '11111111-1111-1111-1111-111111111111',
  },
  clientSecret: {
    text: `the app registration’s client secret (${SECRET_OR})`,
    example: { secret: 'sentinelClientSecret' },
  },
  endpoint: {
    text: 'the data collection endpoint’s logs ingestion URL',
    example: 'https://my-dce-abcd.eastus-1.ingest.monitor.azure.com',
  },
  ruleId: {
    text: 'the data collection rule’s immutable id',
    example: 'dcr-00000000000000000000000000000000',
  },
  stream: { text: 'the rule’s stream', example: 'Custom-ExposureAlerts_CL' },
  loginUrl: {
    text: 'where the Entra token comes from (default `https://login.microsoftonline.com`)',
    example: 'https://login.microsoftonline.com',
  },
};

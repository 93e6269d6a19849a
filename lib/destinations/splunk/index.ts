/** Splunk's HTTP Event Collector: every item as one event, many to a request, at most 1 MB. */
import * as z from 'zod/mini';
import { nonEmpty } from '../../rules/match-schema.ts';
import { httpUrl, secretOr } from '../../rules/schema-parts.ts';
import { baseUrl, urlText } from '../describe.ts';
import type { KindBody, KindFace } from '../kind.ts';
import type { SplunkDestination } from './types.ts';

export const splunkSchema = z.strictObject({
  type: z.literal('splunk'),
  url: httpUrl,
  token: secretOr(nonEmpty),
  index: z.optional(nonEmpty),
  sourcetype: z._default(nonEmpty, 'exposure_alerts'),
});
export type SplunkConfig = z.infer<typeof splunkSchema>;

export const splunkKind: KindFace<SplunkConfig, SplunkDestination> = {
  type: 'splunk',
  title: 'Splunk HEC',
  schema: splunkSchema,
  resolve: (name, config, get) => ({
    name,
    type: 'splunk',
    url: baseUrl(config.url),
    authorization: `Splunk ${get(config.token, 'token')}`,
    ...(config.index ? { index: config.index } : {}),
    sourcetype: config.sourcetype,
  }),
  describe: (config) =>
    `Splunk HEC: POST ${urlText(config.url, '/services/collector/event')} (its token is a credential, not shown)`,
  docs: async () => (await import('./docs.ts')).docs,
  load: async (): Promise<KindBody<SplunkDestination>> => (await import('./body.ts')).splunkBody,
};

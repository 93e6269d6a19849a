/**
 * Microsoft Sentinel through the Logs Ingestion API: every item as one record of a JSON array, at
 * most 1 MB a request, with an Entra token bought with the app's client credentials and cached.
 */
import * as z from 'zod/mini';
import { nonEmpty } from '../../rules/match-schema.ts';
import { httpUrl, secretOr } from '../../rules/schema-parts.ts';
import { baseUrl, urlText } from '../describe.ts';
import type { KindBody, KindFace } from '../kind.ts';
import type { SentinelDestination } from './types.ts';

export const sentinelSchema = z.strictObject({
  type: z.literal('sentinel'),
  tenantId: nonEmpty,
  clientId: nonEmpty,
  clientSecret: secretOr(nonEmpty),
  endpoint: httpUrl,
  ruleId: nonEmpty,
  stream: nonEmpty,
  loginUrl: z._default(httpUrl, 'https://login.microsoftonline.com'),
});
export type SentinelConfig = z.infer<typeof sentinelSchema>;

export const sentinelKind: KindFace<SentinelConfig, SentinelDestination> = {
  type: 'sentinel',
  title: 'Microsoft Sentinel',
  schema: sentinelSchema,
  resolve: (name, config, get) => ({
    name,
    type: 'sentinel',
    tenantId: config.tenantId,
    clientId: config.clientId,
    clientSecret: get(config.clientSecret, 'clientSecret'),
    endpoint: baseUrl(config.endpoint),
    ruleId: config.ruleId,
    stream: config.stream,
    loginUrl: baseUrl(config.loginUrl),
  }),
  describe: (config) =>
    `Microsoft Sentinel: POST ${urlText(config.endpoint, `/dataCollectionRules/${config.ruleId}/streams/${config.stream}`)} with an Entra token for client ${config.clientId} (its secret is a credential, not shown)`,
  docs: async () => (await import('./docs.ts')).docs,
  load: async (): Promise<KindBody<SentinelDestination>> => (await import('./body.ts')).sentinelBody,
};

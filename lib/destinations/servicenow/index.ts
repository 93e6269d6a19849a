/**
 * ServiceNow (Table API): one incident per item, or per digest, found again by its
 * `correlation_id` so a create of unknown outcome is never made twice (deliver/tickets.ts).
 */
import * as z from 'zod/mini';
import { nonEmpty } from '../../rules/match-schema.ts';
import { httpUrl, secretOr } from '../../rules/schema-parts.ts';
import { baseUrl, urlText } from '../describe.ts';
import type { KindBody, KindFace } from '../kind.ts';
import type { ServiceNowDestination } from './types.ts';

export const servicenowSchema = z.strictObject({
  type: z.literal('servicenow'),
  url: httpUrl,
  username: nonEmpty,
  password: secretOr(nonEmpty),
  table: z._default(
    z.string().check(z.regex(/^[a-z_][a-z0-9_]*$/, 'expected a table name such as incident')),
    'incident',
  ),
  assignmentGroup: z.optional(nonEmpty),
});
export type ServiceNowConfig = z.infer<typeof servicenowSchema>;

export const servicenowKind: KindFace<ServiceNowConfig, ServiceNowDestination> = {
  type: 'servicenow',
  title: 'ServiceNow',
  schema: servicenowSchema,
  resolve: (name, config, get) => ({
    name,
    type: 'servicenow',
    url: baseUrl(config.url),
    authorization: `Basic ${Buffer.from(`${config.username}:${get(config.password, 'password')}`).toString('base64')}`,
    table: config.table,
    ...(config.assignmentGroup ? { assignmentGroup: config.assignmentGroup } : {}),
  }),
  tickets: { noun: 'incident' },
  followUps: () => 'ticket',
  describe: (config) =>
    `ServiceNow: POST ${urlText(config.url, `/api/now/table/${config.table}`)} as ${config.username} (its password is a credential, not shown)`,
  docs: async () => (await import('./docs.ts')).docs,
  load: async (): Promise<KindBody<ServiceNowDestination>> => (await import('./body.ts')).servicenowBody,
};

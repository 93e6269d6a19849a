/**
 * The config schema of the ticket and SIEM destinations (interface.md section 4): Jira, ServiceNow,
 * Splunk HEC and Microsoft Sentinel. schema.ts puts them in the union of destinations.
 */
import * as z from 'zod/mini';
import { nonEmpty } from './match-schema.ts';
import { httpUrl, secretOr } from './schema-parts.ts';

/** Jira Cloud (REST v3): one issue per item, or per digest, found again by its `exposure-` label. */
export const jiraDestination = z.strictObject({
  type: z.literal('jira'),
  url: httpUrl,
  email: nonEmpty,
  apiToken: secretOr(nonEmpty),
  project: z.string().check(z.regex(/^[A-Z][A-Z0-9_]*$/, 'expected a Jira project key such as SEC')),
  issueType: z._default(nonEmpty, 'Task'),
  labels: z.optional(z.array(z.string().check(z.regex(/^\S+$/, 'a Jira label has no spaces')))),
  /** The transition a follow-up of ignore or remediate moves the issue through (its name). */
  doneTransition: z.optional(nonEmpty),
});

/** ServiceNow (Table API): one incident per item, found again by its `correlation_id`. */
export const servicenowDestination = z.strictObject({
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

/** Splunk's HTTP Event Collector: every item as one event, many to a request. */
export const splunkDestination = z.strictObject({
  type: z.literal('splunk'),
  url: httpUrl,
  token: secretOr(nonEmpty),
  index: z.optional(nonEmpty),
  sourcetype: z._default(nonEmpty, 'exposure_alerts'),
});

/** Microsoft Sentinel, through the Logs Ingestion API: every item as one record. */
export const sentinelDestination = z.strictObject({
  type: z.literal('sentinel'),
  tenantId: nonEmpty,
  clientId: nonEmpty,
  clientSecret: secretOr(nonEmpty),
  endpoint: httpUrl,
  ruleId: nonEmpty,
  stream: nonEmpty,
  loginUrl: z._default(httpUrl, 'https://login.microsoftonline.com'),
});

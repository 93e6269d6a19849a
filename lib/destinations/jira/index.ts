/**
 * Jira Cloud (REST v3): one issue per item, or per digest, found again by its `exposure-` label
 * so a create of unknown outcome is never made twice (deliver/tickets.ts).
 */
import * as z from 'zod/mini';
import { nonEmpty } from '../../rules/match-schema.ts';
import { httpUrl, secretOr } from '../../rules/schema-parts.ts';
import { baseUrl, urlText } from '../describe.ts';
import type { KindBody, KindFace } from '../kind.ts';
import type { JiraDestination } from './types.ts';

export const jiraSchema = z.strictObject({
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
export type JiraConfig = z.infer<typeof jiraSchema>;

export const jiraKind: KindFace<JiraConfig, JiraDestination> = {
  type: 'jira',
  title: 'Jira',
  schema: jiraSchema,
  resolve: (name, config, get) => ({
    name,
    type: 'jira',
    url: baseUrl(config.url),
    authorization: `Basic ${Buffer.from(`${config.email}:${get(config.apiToken, 'apiToken')}`).toString('base64')}`,
    project: config.project,
    issueType: config.issueType,
    labels: config.labels ?? [],
    ...(config.doneTransition ? { doneTransition: config.doneTransition } : {}),
  }),
  tickets: { noun: 'issue' },
  followUps: () => 'ticket',
  describe: (config) =>
    `Jira: POST ${urlText(config.url, '/rest/api/3/issue')} in project ${config.project} as ${config.issueType}, as ${config.email} (its API token is a credential, not shown)`,
  docs: async () => (await import('./docs.ts')).docs,
  load: async (): Promise<KindBody<JiraDestination>> => (await import('./body.ts')).jiraBody,
};

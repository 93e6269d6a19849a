/** What each key of this kind's config means: the config reference and `config schema` read it. */
import { SECRET_OR } from '../describe.ts';
import type { KeyDoc } from '../kind.ts';

export const docs: Record<string, KeyDoc> = {
  url: { text: 'the Jira Cloud site', example: 'https://acme.atlassian.net' },
  email: {
    text: 'the Atlassian account the issues are created as',
    example: 'alerts@acme.example',
  },
  apiToken: {
    text: `that account’s API token (${SECRET_OR})`,
    example: { secret: 'jiraApiToken' },
  },
  project: { text: 'the project key', example: 'SEC' },
  issueType: { text: 'the issue type (default `Task`)', example: 'Task' },
  labels: {
    text: 'labels every issue gets, besides its own `exposure-<16 hex>` (no spaces)',
    example: ['exposure'],
  },
  doneTransition: {
    text: 'the transition an issue goes through when someone ignores or remediates its event (its name)',
    example: 'Done',
  },
};

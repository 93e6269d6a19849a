/** What a Jira destination resolves to: its face (index.ts) and body share it, so neither imports the other. */
export interface JiraDestination {
  name: string;
  type: 'jira';
  /** The site, `https://acme.atlassian.net`, without a trailing slash. */
  url: string;
  /** `Basic base64(email:apiToken)`: a secret. */
  authorization: string;
  project: string;
  issueType: string;
  labels: string[];
  doneTransition?: string;
}

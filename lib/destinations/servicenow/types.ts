/** What a ServiceNow destination resolves to: its face (index.ts) and body share it, so neither imports the other. */
export interface ServiceNowDestination {
  name: string;
  type: 'servicenow';
  url: string;
  /** `Basic base64(username:password)`: a secret. */
  authorization: string;
  table: string;
  assignmentGroup?: string;
}

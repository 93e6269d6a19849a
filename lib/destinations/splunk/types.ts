/** What a Splunk destination resolves to: its face (index.ts) and body share it, so neither imports the other. */
export interface SplunkDestination {
  name: string;
  type: 'splunk';
  /** The base URL, without a trailing slash. */
  url: string;
  /** `Splunk <token>`: a secret. */
  authorization: string;
  index?: string;
  sourcetype: string;
}

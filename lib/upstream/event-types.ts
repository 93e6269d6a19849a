/**
 * Event types and the families that contain them.
 *
 * The containment table is the spec's (endpoint 11, the event search). The event-search filter
 * also names families that the table does not spell out (`forum_content`, `blog_content`,
 * `buckets`, `source_code`, `social_media`, `profile`); their members here are our reading of
 * those names, kept in this one place so the emulator and the route matcher agree.
 */

export const SEVERITIES = ['info', 'low', 'medium', 'high', 'critical'] as const;
export type Severity = (typeof SEVERITIES)[number];

export function severityRank(severity: Severity): number {
  return SEVERITIES.indexOf(severity);
}

/** Values the shared search body accepts in `filters.type`. */
export const EVENT_FILTER_TYPES = [
  'illicit_networks',
  'open_web',
  'leak',
  'domain',
  'listing',
  'forum_content',
  'blog_content',
  'blog_post',
  'profile',
  'chat_message',
  'ransomleak',
  'infected_devices',
  'financial_data',
  'bot',
  'stealer_log',
  'paste',
  'social_media',
  'source_code',
  'source_code_files',
  'stack_exchange',
  'google',
  'service',
  'buckets',
  'bucket',
  'bucket_object',
] as const;

/** Values endpoint 11 accepts in `types`. */
export const LEGACY_SEARCH_TYPES = [
  'attachment',
  'listing',
  'ransomleak',
  'forum_post',
  'forum_topic',
  'forum_profile',
  'blog_post',
  'seller',
  'paste',
  'leak',
  'chat_message',
  'domain',
  'bot',
  'stealer_log',
  'infected_devices',
  'driller',
  'driller_forum_topic',
  'driller_forum_post',
  'driller_profile',
  'cc',
  'ccbin',
  'financial_data',
  'leaked_data',
  'leaked_file',
  'document',
  'account',
  'actor',
  'forum_content',
  'blog_content',
  'profile',
  'leaked_credential',
  'illicit_networks',
  'open_web',
  'domains',
  'leaks',
  'social_media_account',
  'social_media',
  'source_code',
  'source_code_secrets_np',
  'source_code_secrets',
  'source_code_files',
  'docker',
  'stack_exchange',
  'google',
  'service',
  'driller_host',
  'buckets',
  'bucket',
  'bucket_object',
  'whois',
  'cookie',
  'pii',
  'experimental',
] as const;

export const TYPE_FAMILIES: Readonly<Record<string, readonly string[]>> = {
  // From the spec's containment table.
  illicit_networks: [
    'listing',
    'forum_topic',
    'seller',
    'stealer_log',
    'blog_post',
    'ransomleak',
    'forum_post',
    'bot',
    'financial_data',
    'chat_message',
    'forum_profile',
  ],
  open_web: [
    'stack_exchange',
    'paste',
    'source_code_files',
    'service',
    'source_code_secrets',
    'social_media_account',
    'google',
    'bucket_object',
    'docker',
    'bucket',
  ],
  leaks: ['leak'],
  domains: ['domain'],
  // Filter family names the table leaves implicit.
  forum_content: ['forum_post', 'forum_topic'],
  blog_content: ['blog_post'],
  buckets: ['bucket', 'bucket_object'],
  source_code: ['source_code_files', 'source_code_secrets'],
  social_media: ['social_media_account'],
  profile: ['forum_profile'],
};

/** Concrete types an event can carry; the emulator produces every one of them. */
export const EVENT_TYPES = [
  ...new Set([...Object.values(TYPE_FAMILIES).flat(), 'infected_devices', 'leaked_credential']),
] as string[];

/** Whether an event of type `eventType` is selected by `selector` (a type or a family name). */
export function typeMatches(selector: string, eventType: string): boolean {
  if (selector === eventType) return true;
  return TYPE_FAMILIES[selector]?.includes(eventType) ?? false;
}

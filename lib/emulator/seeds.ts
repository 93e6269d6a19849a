/**
 * What the emulator's seeded world is drawn from: the tenants, the API keys that act for several,
 * the credential domains, the leak sources, and the word lists text, names and passwords are made
 * of. Changing a list, or its order, changes every seeded dataset (dataset.ts draws from them in
 * one random stream), so a test that names a seeded item would find another.
 */

export const CREDENTIAL_DOMAINS = [
  'acme.test',
  'globex.test',
  'initech.test',
  'example.com',
  'mail.example.com',
  'other.org',
];

/** An account of the seeded data in a quarter of its domain's leaks. */
export const REPEAT_VICTIM = 'kim.lee@other.org';
export const REPEAT_VICTIM_DOMAIN = 'other.org';

// Acme is an organization alone; Globex and Initech are two tenants of one organization (301).
export const TENANT_SEEDS = [
  {
    id: 1001,
    slug: 'acme',
    name: 'Acme Corp',
    accountTakeover: true,
    domain: 'acme.test',
    organizationId: 300,
  },
  {
    id: 1002,
    slug: 'globex',
    name: 'Globex',
    accountTakeover: false,
    domain: 'globex.test',
    organizationId: 301,
  },
  {
    id: 1003,
    slug: 'initech',
    name: 'Initech',
    accountTakeover: true,
    domain: 'initech.test',
    organizationId: 301,
  },
] as const;

/**
 * A third tenant of Globex and Initech's organization, which the MSSP key may not act for. Made
 * after everything else, from its own random stream: the rest of the data is unchanged by it.
 */
export const EXTRA_TENANT_SEEDS = [
  {
    id: 1004,
    slug: 'umbrella',
    name: 'Umbrella',
    accountTakeover: false,
    domain: 'umbrella.test',
    organizationId: 301,
  },
] as const;

/**
 * An API key of organization 301 that may act for two of its tenants, as an MSSP's key does:
 * `{"tenant_id": N}` picks which (Globex without one), and Umbrella is refused (403).
 */
export const MSSP_API_KEY = { key: 'emu-mssp-key', tenants: [1002, 1003] } as const;

/** The organization's own key for Globex, Initech and Umbrella alike (scale tests of many tenants). */
export const ORGANIZATION_API_KEY = { key: 'emu-org301-key', tenants: [1002, 1003, 1004] } as const;

export type TenantSeed = (typeof TENANT_SEEDS)[number] | (typeof EXTRA_TENANT_SEEDS)[number];

export const TAGS = ['vip', 'finance', 'phishing', 'credentials', 'noise', 'triage'];
export const ORIGINS = ['darkforum', 'pastebin', 'telegram', 'github', 'ransomwatch', 'marketplace', 's3'];
export const FIRST = [
  'jane',
  'john',
  'alex',
  'maria',
  'li',
  'sam',
  'noor',
  'omar',
  'eva',
  'raj',
  'kim',
  'lee',
];
export const LAST = ['doe', 'smith', 'garcia', 'chen', 'khan', 'novak', 'silva', 'ito', 'brown', 'dubois'];
export const WORDS = [
  'Summer',
  'dragon',
  'Passw0rd',
  'letmein',
  'Qwerty',
  'monkey',
  'Sunshine',
  'hunter',
  'Welcome',
];
// Text as strangers write it: mentions, fake links and markup that must never reach a channel live.
export const WILD_TEXT = [
  'selling fresh access <!channel> dm me',
  'combo list <https://evil.example|click here> for {domain}',
  'ping <@U123ABC> about the {domain} dump',
  'rates &amp; prices for {domain} admin panel <b>cheap</b>',
  'new stealer logs from {domain} <!here>',
];

/** The global leak sources, in order (`src-1` …): the fifth has no leak date, the sixth no breach date. */
export const SOURCE_NAMES = [
  'Collection combolist 2025',
  'Stealer logs batch',
  'Forum database dump',
  'Retail breach',
  'Gaming platform leak',
  'Unknown paste',
];

/**
 * What every key of the alert config means: one description (and, where it helps, an example) per
 * key, the single source of `config schema`'s `description`s (so editors show them on hover) and
 * of the config reference, docs/config.md, which `npm run docs` writes from this and the schema
 * (config-reference.ts). A test walks the schema and fails on a key with no entry here, and on a
 * reference that is not what config-reference.ts would write.
 *
 * Keys are the schema's paths: `sources.credentials.domains`, `routes[].match`, and
 * `destinations.<name>{slack}.url` for a key of one kind of destination, which the kind's own
 * folder describes (`lib/destinations/<kind>/docs.ts`, added by `withKindDocs`). A shape used in several
 * places (a route's match, a secret reference, event filters) is described once under its own
 * suffix (`match.kind`, `secret`, `filters.tags`): the longest suffix that has an entry wins.
 *
 * It is longer than 300 lines because it is one table with an entry per key of the config, and a
 * table split across files would only be harder to check against the schema.
 *
 * Only the CLI loads this module: the Lambda bundles carry the schema, not its documentation.
 */
import { SECRET_OR } from '../destinations/describe.ts';
import type { KeyDoc } from '../destinations/kind.ts';
import { KINDS } from '../destinations/kinds.ts';
import { slackKind } from '../destinations/slack/index.ts';

export type { KeyDoc };

export const CONFIG_DOCS: Record<string, KeyDoc> = {
  $schema: {
    text: 'the JSON Schema this file follows, for editors; ignored otherwise',
    example: './alerts.schema.json',
  },
  sources: { text: 'what to watch: the tenant event feed, identifier groups and credential domains' },
  'sources.tenantEvents': { text: "the tenant's own event feed (the token's tenant)" },
  'sources.tenantEvents.enabled': { text: 'poll the tenant feed', example: true },
  filters: {
    text: 'passed to the upstream event search as they are (the shared search body); fewer matches upstream, fewer alerts',
    example: { severity: ['high', 'critical'] },
  },
  'filters.severity': { text: 'only events of these upstream severities', example: ['high', 'critical'] },
  'filters.type': {
    text: 'only events of these types (the spec’s search types)',
    example: ['leak', 'paste'],
  },
  'filters.estimated_created_at': {
    text: 'bounds on when the content was created; a walk keeps them for good, so an older bound hides late matches of old content forever: prefer none',
  },
  'filters.estimated_created_at.gt': { text: 'created after this time', example: '2026-01-01T00:00:00Z' },
  'filters.estimated_created_at.gte': {
    text: 'created at or after this time',
    example: '2026-01-01T00:00:00Z',
  },
  'filters.estimated_created_at.lt': { text: 'created before this time', example: '2027-01-01T00:00:00Z' },
  'filters.estimated_created_at.lte': {
    text: 'created at or before this time',
    example: '2027-01-01T00:00:00Z',
  },
  'filters.tags': { text: 'only events with these tenant tags', example: ['vip'] },
  'filters.is_ignored': { text: 'false: leave out events marked ignored upstream', example: false },
  'filters.is_remediated': { text: 'false: leave out events marked remediated upstream', example: false },
  lookback: {
    text: 'a duration, ISO 8601 (`PT24H`) or short (`24h`): what a stream’s first walk alerts on (older matches are recorded as seen); for credentials it also bounds every walk by when the store received them',
    example: 'PT24H',
  },
  firstRun: {
    text: '`alert`: the first walk alerts on what the lookback finds; `baseline`: it records it as seen and alerts only on what comes after',
    example: 'baseline',
  },
  'sources.identifierGroups': { text: 'identifier groups to poll, each a stream of its own' },
  'sources.identifierGroups[].id': { text: 'the group’s id upstream', example: 12 },
  'sources.identifierGroups[].name': { text: 'a name for alerts and logs', example: 'Executives' },
  'sources.credentials': { text: 'leaked credentials of your domains, from the global credential search' },
  'sources.credentials.domains': {
    text: 'the domains to watch (subdomains included); each is a stream, and each page of 100 costs one global search of the monthly quota',
    example: ['example.com'],
  },
  'sources.credentials.pageSize': {
    text: 'credentials a page (1 to 10000); below 100 costs as many searches as 100 does',
    example: 100,
  },
  heartbeat: {
    text: 'URLs a monitoring service (healthchecks.io, Cronitor, Dead Man’s Snitch) expects to hear from after each poll cycle that ended well; when a ping is late, the service alerts',
    example: { events: { secret: 'eventsHeartbeat' }, credentials: { secret: 'credentialsHeartbeat' } },
  },
  'heartbeat.events': {
    text: `pinged after each events cycle that ended well (on AWS: each dispatch whose jobs all ended well): ${SECRET_OR}`,
    example: { secret: 'eventsHeartbeat' },
  },
  'heartbeat.credentials': {
    text: `pinged after each credentials cycle that ended well: ${SECRET_OR}`,
    example: { secret: 'credentialsHeartbeat' },
  },
  'heartbeat.style': {
    text: '`healthchecks` (default): also `<url>/start` as a cycle begins and a POST of what failed to `<url>/fail`; `plain`: the success ping only',
    example: 'healthchecks',
  },
  tenants: {
    text: 'several tenants of the organization from one deployment, each with its own sources; their streams and item keys name the tenant (`tenant:1001`, `1001:<uid>`), and each uses a token of its own (an API key, exchanged once per tenant)',
    example: [{ id: 1001, name: 'Acme', sources: { tenantEvents: { enabled: true } } }],
  },
  'tenants[].id': { text: 'the tenant’s id upstream', example: 1001 },
  'tenants[].name': { text: 'its name, shown in every alert and matched by routes', example: 'Acme' },
  'tenants[].identity': {
    text: 'this tenant’s own identity providers, for its own logins: a tenant without one has none, since the top level’s `identity` (providers, `auto` and its cap) is never inherited',
  },
  destinations: {
    text: 'where alerts go, by a name of your choosing; each has a `type`',
    example: { soc: { type: slackKind.type, url: { secret: 'socSlackWebhook' } } },
  },
  type: { text: 'the kind of destination' },
  secret: {
    text: 'the name of a value in the secret object (SECRET_ID on AWS, SECRETS_FILE locally)',
    example: 'socSlackWebhook',
  },
  routes: {
    text: 'which alerts go where: an item goes to every destination of every route that matches, in order, until a route with `stop` matches',
  },
  'routes[].name': { text: 'a name, carried in the alerts and the webhook body', example: 'high-and-up' },
  match: {
    text: 'every key given must hold; an empty match matches everything',
    example: { severity: { gte: 'high' } },
  },
  'match.kind': { text: '`event` or `credential`', example: 'event' },
  'match.sources': {
    text: 'the streams it came from: `tenant`, `group:<id>`, `credentials:<domain>`',
    example: ['group:12'],
  },
  'match.severity': {
    text: '`{ "gte": … }` at or above, in the order info < low < medium < high < critical, or `{ "in": [...] }`',
    example: { gte: 'high' },
  },
  'match.severity.gte': { text: 'this severity or higher', example: 'high' },
  'match.severity.in': { text: 'one of these severities', example: ['critical'] },
  'match.types': {
    text: 'event types, or families of them (`illicit_networks` matches `forum_post`)',
    example: ['paste'],
  },
  'match.tags': { text: 'tenant tags: `any`, `all` and `none` of a list', example: { any: ['vip'] } },
  'match.tags.any': { text: 'at least one of these tags', example: ['vip'] },
  'match.tags.all': { text: 'every one of these tags', example: ['vip', 'finance'] },
  'match.tags.none': { text: 'none of these tags', example: ['test'] },
  'match.identifiers': { text: 'identifiers the event names, by id or name', example: ['ceo@example.com'] },
  'match.domains': {
    text: 'credentials whose domain is one of these or a subdomain of one',
    example: ['example.com'],
  },
  'match.tenants': {
    text: 'items of these `tenants` entries, by id or name (never an item of the top-level sources)',
    example: ['Acme'],
  },
  'match.topLevel': {
    text: '`true`: only items of the top-level `sources`; `false`: only items of `tenants` entries',
    example: true,
  },
  'match.identity': {
    text: 'credentials whose login’s identity verdict is one of these: `at_risk`, `rotated`, `disabled`, `no_account`, `unknown`; a credential without a verdict (its login outside every provider’s domains) and every event match none',
    example: ['at_risk', 'unknown'],
  },
  'routes[].to': {
    text: 'destination names; empty with `stop`: the matching items go nowhere (a drop rule)',
    example: ['soc'],
  },
  'routes[].stop': { text: 'no route after this one is tried for an item it matches', example: true },
  silences: {
    text: 'alerts recorded but not sent until a time (run-time silences, which need no deploy, are made with `silences add`)',
  },
  'silences[].name': { text: 'a name, shown where it silences', example: 'migration' },
  'silences[].until': {
    text: 'when it ends: a timestamp with a time zone',
    example: '2026-12-31T00:00:00Z',
  },
  'silences[].reason': { text: 'why, for the record', example: 'paste noise during the migration' },
  passwords: {
    text: '`masked` (first and last character, `*` between), `hidden` (the field removed) or `clear` (explicit opt-in); every destination, the console and logs',
    example: 'masked',
  },
  digest: {
    text: 'more than `threshold` items for one destination in one pass go as one digest listing `maxItems` and counting the rest',
  },
  'digest.threshold': { text: 'items a pass sends one by one before it sends a digest', example: 5 },
  'digest.maxItems': {
    text: 'items a digest lists (a destination with smaller limits lists what fits and counts the rest)',
    example: 20,
  },
  identity: {
    text: 'who a leaked login is, for the top-level sources’ logins: a credential whose login lies in a provider’s `domains` is looked up there before it is routed (the account, whether it can sign in, when its password changed; never a password) and carries its verdict, `at_risk`, `rotated`, `disabled`, `no_account` or `unknown`, in every alert and in `match.identity`. A `tenants` entry has its own `identity`: nothing is inherited',
    example: {
      providers: {
        corp: {
          type: 'entra',
          tenantId: '00000000-0000-0000-0000-000000000000',
          clientId: '11111111-1111-1111-1111-111111111111',
          clientSecret: { secret: 'entraClientSecret' },
          domains: ['acme.com'],
        },
      },
    },
  },
  'identity.providers': {
    text: 'identity providers by a name of your choosing (letters, digits, `_ . -`, at most 40), shown in alerts as `Entra ID corp`; a login goes to the first provider, in this order, whose domains cover it (`config validate` warns of overlaps)',
  },
  'identity.providers.<name>{entra}.type': {
    text: '`entra`: Microsoft Entra ID through Microsoft Graph v1.0, with an app registration’s client credentials; looking up needs the application permission User.Read.All, each action its own (`identity test` lists them against the token)',
    example: 'entra',
  },
  'identity.providers.<name>.tenantId': {
    text: 'the Entra directory (tenant) id, a GUID, or a verified domain such as acme.onmicrosoft.com',
    example: '00000000-0000-0000-0000-000000000000',
  },
  'identity.providers.<name>.clientId': {
    text: 'the app registration’s application (client) id',
    example: '11111111-1111-1111-1111-111111111111',
  },
  'identity.providers.<name>.clientSecret': {
    text: 'the app’s client secret, only as `{ "secret": "NAME" }` in the secret object (on AWS only the workers read it)',
    example: { secret: 'entraClientSecret' },
  },
  'identity.providers.<name>{entra}.clientSecret.secret': {
    text: 'the name of the client secret in the secret object',
    example: 'entraClientSecret',
  },
  'identity.providers.<name>.domains': {
    text: 'logins under these domains (or their subdomains) are looked up in this provider; a bare login name counts as `<name>@<the credential’s domain>`; a login outside every provider’s domains gets no verdict',
    example: ['acme.com'],
  },
  'identity.providers.<name>.requestsPerSecond': {
    text: 'the most requests a second this deployment sends the provider’s directory (Graph’s users, Okta’s users), every run together: lookups and actions take turns of it through the table, and a 429 or Okta’s spent rate pauses it for all until the time the provider named. Entra’s Identity Protection (`confirmCompromised`) keeps its own 1 a second per directory',
    example: 5,
  },
  'identity.providers.<name>.graphUrl': {
    text: 'Microsoft Graph’s base URL, without a trailing `/`: another for a national cloud, or a stand-in',
    example: 'https://graph.microsoft.com',
  },
  'identity.providers.<name>.loginUrl': {
    text: 'where tokens are bought (`<loginUrl>/<tenantId>/oauth2/v2.0/token`), without a trailing `/`: another for a national cloud, or a stand-in',
    example: 'https://login.microsoftonline.com',
  },
  'identity.providers.<name>{okta}.type': {
    text: '`okta`: Okta’s Management API with an API token (`Authorization: SSWS`); an OAuth service app (a signed client assertion, scoped) is a later addition: an API token only for now',
    example: 'okta',
  },
  'identity.providers.<name>.orgUrl': {
    text: 'your Okta org’s URL, without a trailing `/`',
    example: 'https://acme.okta.com',
  },
  'identity.providers.<name>.token': {
    text: 'an Okta API token, only as `{ "secret": "NAME" }` in the secret object; it acts with its admin’s role (a role that may read users; actions need one that may manage them) and has no scopes, so `identity test` checks it with a read',
    example: { secret: 'oktaApiToken' },
  },
  'identity.providers.<name>{okta}.token.secret': {
    text: 'the name of the API token in the secret object',
    example: 'oktaApiToken',
  },
  'identity.providers.<name>.userRisk': {
    text: 'the org has Okta’s user-risk API (feature-gated): `confirmCompromised` sets the user’s risk to HIGH; without it, `confirmCompromised` is not taken for this provider',
    example: false,
  },
  'identity.auto': {
    text: 'actions taken by themselves on the first `at_risk` verdict of each account (off unless set): never for an item that was baselined, silenced or routed nowhere, never under `--dry-run`; audited and followed up as any other action',
    example: { atRisk: ['revokeSessions'], maxPerHour: 20 },
  },
  'identity.auto.atRisk': {
    text: 'which: only `revokeSessions` and `confirmCompromised` (`config validate` refuses the others, which a person decides); `confirmCompromised` is skipped for an Okta provider without `userRisk`',
    example: ['revokeSessions'],
  },
  'identity.auto.maxPerHour': {
    text: 'automatic actions an hour at most, for this scope (the top level, or the tenant), counted in the table across every run; past it, the alert says the automatic response is paused until the hour turns',
    example: 20,
  },
  'identity.auto.exclude': {
    text: 'logins never acted on automatically (`*` matches any run of characters), such as break-glass administrators',
    example: ['admin-*@acme.com'],
  },
  actions: { text: 'acting on alerts from where they are: buttons on Slack alerts and the slash command' },
  'actions.slack': {
    text: 'the Slack app whose buttons and `/exposure` command reach POST /slack/interactions and /slack/commands; with it, each event’s own Slack message carries Ignore, Remediated and Silence similar',
  },
  'actions.slack.signingSecret': {
    text: 'the app’s signing secret, `{ "secret": "NAME" }` in the secret object: every request from Slack is verified with it',
    example: { secret: 'slackSigningSecret' },
  },
  'actions.slack.teamId': {
    text: 'the Slack workspace id (T…) requests must come from',
    example: 'T0123ABCD',
  },
  'actions.slack.allowedUsers': {
    text: 'Slack user ids (U… or W…) who may act and look up, or `"*"` for every member of the workspace; anyone else gets a refusal only they see',
    example: ['U0123ABCD', 'U0456EFGH'],
  },
  'actions.slack.identityAdmins': {
    text: 'Slack user ids (U… or W…, each also in allowedUsers; never `"*"`) who may disable and enable an account from the menu beside a login with an identity verdict; every allowed user may take the other account actions',
    example: ['U0123ABCD'],
  },
  'actions.slack.responseUrlPrefix': {
    text: 'answers go to a request’s `response_url` only when it is on this origin, under this path: an `https://` origin followed by `/` (`http://` only for a loopback stand-in), so it can match no other host (default `https://hooks.slack.com/`)',
    example: 'https://hooks.slack.com/',
  },
  ops: { text: 'where a destination that refuses for good is reported, once' },
  'ops.to': { text: 'destination names', example: ['oncall'] },
  upstream: { text: 'the organization’s rate tiers and the global searches kept back, shared by every run' },
  'upstream.requestsPerSecond': {
    text: 'requests a second, every endpoint together (the Basic tier)',
    example: 4,
  },
  'upstream.searchRequestsPerSecond': { text: 'global searches a second (the Search tier)', example: 1 },
  'upstream.quotaReserve': {
    text: 'credential polling pauses when fewer global searches than this are left this month',
    example: 100,
  },
};

let kindsAdded: Promise<void> | undefined;

/**
 * CONFIG_DOCS with every kind's keys added (`destinations.<name>{<kind>}.<key>`), each from its
 * kind's folder; call it before reading CONFIG_DOCS (config-reference.ts, `config schema`).
 */
export async function withKindDocs(): Promise<Record<string, KeyDoc>> {
  kindsAdded ??= (async () => {
    for (const kind of Object.values(KINDS))
      for (const [key, doc] of Object.entries((await kind.docs?.()) ?? {}))
        CONFIG_DOCS[`destinations.<name>{${kind.type}}.${key}`] = doc;
  })();
  await kindsAdded;
  return CONFIG_DOCS;
}

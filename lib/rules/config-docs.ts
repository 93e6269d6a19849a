/**
 * What every key of the alert config means: one description (and, where it helps, an example) per
 * key, the single source of `config schema`'s `description`s (so editors show them on hover) and
 * of the config reference, docs/config.md, which `npm run docs` writes from this and the schema. A
 * test walks the schema and fails on a key with no entry here, and on a reference that is not
 * what this module would write.
 *
 * Keys are the schema's paths: `sources.credentials.domains`, `routes[].match`, and
 * `destinations.<name>{slack}.url` for a key of one kind of destination. A shape used in several
 * places (a route's match, a secret reference, event filters) is described once under its own
 * suffix (`match.kind`, `secret`, `filters.tags`): the longest suffix that has an entry wins.
 *
 * Only the CLI loads this module: the Lambda bundles carry the schema, not its documentation.
 */
import { configJsonSchema } from './schema.ts';

export interface KeyDoc {
  text: string;
  example?: unknown;
}

const SECRET_OR = 'a string, or `{ "secret": "NAME" }` to take it from the secret object';

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
    text: 'an ISO 8601 duration: what a stream’s first walk alerts on (older matches are recorded as seen); for credentials it also bounds every walk by when the store received them',
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
  destinations: {
    text: 'where alerts go, by a name of your choosing; each has a `type`',
    example: { soc: { type: 'slack', url: { secret: 'socSlackWebhook' } } },
  },
  type: { text: 'the kind of destination' },
  secret: {
    text: 'the name of a value in the secret object (SECRET_ID on AWS, SECRETS_FILE locally)',
    example: 'socSlackWebhook',
  },
  'destinations.<name>{slack}.url': {
    text: `the Slack incoming webhook URL, itself a credential: ${SECRET_OR}`,
    example: { secret: 'socSlackWebhook' },
  },
  'destinations.<name>{email}.provider': {
    text: '`generic` (POST of from, to, subject, text, html to `url`), `sendgrid` or `postmark`',
    example: 'postmark',
  },
  'destinations.<name>{email}.url': {
    text: `the sending API's URL (required for \`generic\`; the provider's own by default): ${SECRET_OR}`,
    example: 'https://mail.example.com/send',
  },
  'destinations.<name>{email}.apiKey': {
    text: `the bearer token (generic, SendGrid) or server token (Postmark): ${SECRET_OR}`,
    example: { secret: 'postmarkToken' },
  },
  'destinations.<name>{email}.from': { text: 'the sender address', example: 'alerts@example.com' },
  'destinations.<name>{email}.to': { text: 'one or more recipient addresses', example: ['soc@example.com'] },
  'destinations.<name>{email}.messageStream': {
    text: 'Postmark message stream (default `outbound`)',
    example: 'outbound',
  },
  'destinations.<name>{webhook}.url': {
    text: `where the JSON body is POSTed: ${SECRET_OR}`,
    example: 'https://siem.example.com/in',
  },
  'destinations.<name>{webhook}.signingSecret': {
    text: `signs each body (X-Signature-256: sha256=HMAC of "<timestamp>.<body>"): ${SECRET_OR}`,
    example: { secret: 'siemKey' },
  },
  'destinations.<name>{webhook}.headers': {
    text: `extra request headers, name to value (${SECRET_OR})`,
    example: { Authorization: { secret: 'siemAuthHeader' } },
  },
  'destinations.<name>{teams}.url': {
    text: 'the channel’s Workflows webhook URL; it carries its signature, so keep it in the secret object',
    example: { secret: 'socTeamsWebhook' },
  },
  'destinations.<name>{pagerduty}.routingKey': {
    text: `the Events API v2 integration key: ${SECRET_OR}`,
    example: { secret: 'oncallRoutingKey' },
  },
  'destinations.<name>{pagerduty}.url': {
    text: 'the Events API endpoint (default https://events.pagerduty.com/v2/enqueue)',
    example: 'https://events.eu.pagerduty.com/v2/enqueue',
  },
  'destinations.<name>{pagerduty}.credentialSeverity': {
    text: 'the PagerDuty severity of a leaked credential: critical, error, warning or info',
    example: 'critical',
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

/** The documentation of the key at `path`: its own entry, else the longest suffix's. */
export function docFor(path: string): KeyDoc | undefined {
  const plain = path.replace(/\{[a-z]+\}/g, '');
  for (const candidate of [path, plain]) {
    const parts = candidate.split('.');
    for (let i = 0; i < parts.length; i++) {
      const key = parts
        .slice(i)
        .join('.')
        .replace(/^[^.]*\[\]\./, '');
      const doc = CONFIG_DOCS[parts.slice(i).join('.')] ?? CONFIG_DOCS[key];
      if (doc) return doc;
    }
  }
  return undefined;
}

export interface SchemaKey {
  path: string;
  node: Record<string, unknown>;
  required: boolean;
}

/**
 * Every key of a JSON Schema, depth first, with its path (`destinations.<name>{slack}.url` inside
 * one branch of a discriminated union, `[]` for array items).
 */
export function schemaKeys(schema: Record<string, unknown>): SchemaKey[] {
  const keys: SchemaKey[] = [];
  const walk = (node: Record<string, unknown> | undefined, path: string) => {
    if (!node || typeof node !== 'object') return;
    const properties = node.properties as Record<string, Record<string, unknown>> | undefined;
    const required = new Set((node.required as string[] | undefined) ?? []);
    for (const [name, child] of Object.entries(properties ?? {})) {
      const here = path ? `${path}.${name}` : name;
      keys.push({ path: here, node: child, required: required.has(name) });
      walk(child, here);
    }
    if (node.items && typeof node.items === 'object')
      walk(node.items as Record<string, unknown>, `${path}[]`);
    const extra = node.additionalProperties;
    if (extra && typeof extra === 'object') walk(extra as Record<string, unknown>, `${path}.<name>`);
    for (const union of ['anyOf', 'oneOf'] as const) {
      for (const branch of (node[union] as Record<string, unknown>[] | undefined) ?? []) {
        const kind = (branch.properties as { type?: { const?: string } } | undefined)?.type?.const;
        walk(branch, kind && union === 'oneOf' ? `${path}{${kind}}` : path);
      }
    }
  };
  walk(schema, '');
  return keys;
}

/** `config schema`: the JSON Schema with every key's description (and an example where there is one). */
export function documentedJsonSchema(): Record<string, unknown> {
  const schema = configJsonSchema();
  for (const { path, node } of schemaKeys(schema)) {
    const doc = docFor(path);
    if (!doc) continue;
    node.description = doc.text.replace(/`/g, '');
    if (doc.example !== undefined) node.examples = [doc.example];
  }
  return schema;
}

/** A key's type as a reader wants it: `string`, `one of: masked, hidden, clear`, `string or { secret }`. */
function typeOf(node: Record<string, unknown>): string {
  if (Array.isArray(node.enum)) return `one of: ${(node.enum as unknown[]).join(', ')}`;
  if (node.const !== undefined) return `\`${String(node.const)}\``;
  const union = (node.anyOf ?? node.oneOf) as Record<string, unknown>[] | undefined;
  if (union) {
    const kinds = union.map((b) =>
      (b.properties as Record<string, unknown> | undefined)?.secret ? '{ secret }' : typeOf(b),
    );
    return [...new Set(kinds)].join(' or ');
  }
  const type = node.type;
  if (type === 'array') {
    const items = node.items as Record<string, unknown> | undefined;
    return `list of ${items ? typeOf(items) : 'values'}`;
  }
  if (type === 'object' && node.additionalProperties && typeof node.additionalProperties === 'object')
    return 'map of name to value';
  return typeof type === 'string' ? (type === 'integer' ? 'whole number' : type) : 'value';
}

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
const json = (value: unknown) => `\`${JSON.stringify(value)}\``;

/**
 * docs/config.md: every key of the config, with its type, default, meaning and an example, in the
 * order of the schema. `npm run docs` writes it; a test checks it is current.
 */
export function configReference(example?: unknown): string {
  const schema = configJsonSchema();
  const rows = schemaKeys(schema).map(({ path, node, required }) => {
    const kind = /\{([a-z]+)\}/.exec(path)?.[1];
    const shown = path.replace(/\{[a-z]+\}/g, '');
    const doc = docFor(path);
    return {
      section: path.split(/[.[]/)[0] ?? path,
      kind,
      line: `| \`${shown}\`${kind ? ` (${kind})` : ''} | ${cell(typeOf(node))} | ${
        node.default !== undefined ? json(node.default) : required ? 'required' : ''
      } | ${cell(doc?.text ?? '')} | ${doc?.example !== undefined ? cell(json(doc.example)) : ''} |`,
    };
  });
  const out = [
    '# The alert config, key by key',
    '',
    'One JSON file (`alerts.config.json`, or the file `ALERTS_CONFIG` names), checked when a run starts and by `config validate`; `config schema` prints its JSON Schema with these descriptions, for editors. Keys not listed here are refused, with their path.',
    '',
    'This page is written by `npm run docs` from the schema itself (`lib/rules/schema.ts`) and the descriptions in `lib/rules/config-docs.ts`; a test fails when a key has no description or this page is out of date.',
    '',
    '`<name>` stands for a name you choose (a destination, a header). A value given as `{ "secret": "NAME" }` is taken from the secret object (`SECRET_ID` on AWS, `SECRETS_FILE` locally). Durations are ISO 8601 (`PT24H`, `P7D`); times are ISO 8601 with a time zone (`2026-12-31T00:00:00Z`).',
  ];
  let section = '';
  let kind: string | undefined;
  const header = ['| key | type | default | what it does | example |', '|---|---|---|---|---|'];
  for (const row of rows) {
    if (row.section !== section || row.kind !== kind) {
      section = row.section;
      kind = row.kind;
      out.push('', kind ? `### \`${section}\`: type \`${kind}\`` : `## \`${section}\``, '', ...header);
    }
    out.push(row.line);
  }
  if (example !== undefined)
    out.push(
      '',
      '## An annotated example',
      '',
      'The deploy guide’s example (`infra/alerts.config.example.json`), each key with what it does:',
      '',
      '```jsonc',
      annotate(example),
      '```',
    );
  return `${out.join('\n')}\n`;
}

/**
 * A config written out with a comment on each key saying what it does (JSON with comments, for
 * reading: the file itself stays plain JSON).
 */
export function annotate(config: unknown): string {
  const lines: string[] = [];
  const comment = (path: string) => {
    const doc = docFor(path);
    if (!doc) return '';
    const text = doc.text.replace(/`/g, '');
    return `  // ${text.length <= 100 ? text : `${text.slice(0, text.lastIndexOf(' ', 99))} …`}`;
  };
  const small = (value: unknown) => {
    const text = JSON.stringify(value);
    return text.length <= 60 ? text : undefined;
  };
  const write = (value: unknown, path: string, indent: string, prefix: string, last: boolean) => {
    const comma = last ? '' : ',';
    const inline = small(value);
    const isObject = value !== null && typeof value === 'object';
    if (inline !== undefined && (!isObject || path.split('.').length > 2 || Array.isArray(value))) {
      lines.push(`${indent}${prefix}${inline}${comma}${prefix ? comment(path) : ''}`);
      return;
    }
    const entries = Array.isArray(value)
      ? value.map((v) => [undefined, v] as const)
      : Object.entries(value as Record<string, unknown>);
    lines.push(`${indent}${prefix}${Array.isArray(value) ? '[' : '{'}${prefix ? comment(path) : ''}`);
    entries.forEach(([key, v], i) => {
      const child =
        key === undefined
          ? `${path}[]`
          : path === 'destinations'
            ? `destinations.<name>${typeof (v as { type?: unknown })?.type === 'string' ? `{${(v as { type: string }).type}}` : ''}`
            : `${path ? `${path}.` : ''}${key}`;
      write(
        v,
        child,
        `${indent}  `,
        key === undefined ? '' : `${JSON.stringify(key)}: `,
        i === entries.length - 1,
      );
    });
    lines.push(`${indent}${Array.isArray(value) ? ']' : '}'}${comma}`);
  };
  write(config, '', '', '', true);
  return lines.join('\n');
}

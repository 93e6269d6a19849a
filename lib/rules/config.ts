/**
 * The alert config (interface.md section 3) as one strict zod schema: an unknown key anywhere is
 * an error naming its path, and `config schema` prints the JSON Schema generated from this same
 * schema. Cross-references (route targets, sources, duplicate names) are checked after the shape.
 *
 * zod/mini keeps the Lambda bundles small; the API is functional (`z.optional(x)`), the same
 * validation.
 */
import { readFile } from 'node:fs/promises';
import * as z from 'zod/mini';
import { ConfigError } from '../errors.ts';
import { RECORD_RETENTION_DAYS } from '../model.ts';
import {
  EVENT_FILTER_TYPES,
  EVENT_TYPES,
  LEGACY_SEARCH_TYPES,
  SEVERITIES,
  TYPE_FAMILIES,
} from '../upstream/event-types.ts';
import { describeIssues, type ItemIssue } from '../upstream/validate.ts';
import { parseDuration } from './duration.ts';

const nonEmpty = z.string().check(z.minLength(1));

/** `{ "secret": "NAME" }`: a value looked up in the secret object. */
export const secretRefSchema = z.strictObject({ secret: nonEmpty });
export type SecretRef = z.infer<typeof secretRefSchema>;
const secretOr = (schema: z.ZodMiniType<string>) => z.union([schema, secretRefSchema]);

const httpUrl = z
  .string()
  .check(z.refine((s) => /^https?:\/\/[^\s/]+/i.test(s) && URL.canParse(s), 'expected an http(s) URL'));

const duration = z
  .string()
  .check(
    z.refine((s) => parseDuration(s) !== undefined, 'expected an ISO 8601 duration such as PT24H or P7D'),
  );

const timestamp = z
  .string()
  .check(
    z.refine(
      (s) => /^\d{4}-\d{2}-\d{2}T/.test(s) && !Number.isNaN(Date.parse(s)),
      'expected an ISO 8601 timestamp',
    ),
  );

const severity = z.enum(SEVERITIES);
const firstRun = z.enum(['alert', 'baseline']);
const knownTypes = new Set<string>([
  ...EVENT_TYPES,
  ...EVENT_FILTER_TYPES,
  ...LEGACY_SEARCH_TYPES,
  ...Object.keys(TYPE_FAMILIES),
]);
const eventType = z
  .string()
  .check(z.refine((s) => knownTypes.has(s), 'expected an event type or family from the spec'));

/** The shared search body's `filters`, passed to the upstream as is. */
export const eventFiltersSchema = z.strictObject({
  severity: z.optional(z.array(severity)),
  type: z.optional(z.array(z.enum(EVENT_FILTER_TYPES))),
  estimated_created_at: z.optional(
    z.strictObject({
      gt: z.optional(timestamp),
      gte: z.optional(timestamp),
      lt: z.optional(timestamp),
      lte: z.optional(timestamp),
    }),
  ),
  tags: z.optional(z.array(nonEmpty)),
  is_ignored: z.optional(z.boolean()),
  is_remediated: z.optional(z.boolean()),
});

const domainName = z
  .string()
  .check(
    z.regex(
      /^(?=.{1,253}$)([a-z0-9-]{1,63}\.)+([a-z]{2,63}|xn--[a-z0-9-]{1,59})$/i,
      'expected a domain name such as example.com',
    ),
  );

const sourcesSchema = z.strictObject({
  tenantEvents: z.optional(
    z.strictObject({
      enabled: z._default(z.boolean(), true),
      filters: z._default(eventFiltersSchema, {}),
      lookback: z._default(duration, 'PT24H'),
      firstRun: z._default(firstRun, 'alert'),
    }),
  ),
  identifierGroups: z._default(
    z.array(
      z.strictObject({
        id: z.int().check(z.positive()),
        name: z.optional(nonEmpty),
        filters: z._default(eventFiltersSchema, {}),
        lookback: z._default(duration, 'PT24H'),
        firstRun: z._default(firstRun, 'alert'),
      }),
    ),
    [],
  ),
  credentials: z.optional(
    z.strictObject({
      domains: z.array(domainName),
      lookback: z._default(duration, 'P7D'),
      pageSize: z._default(z.int().check(z.minimum(1), z.maximum(10_000)), 100),
      firstRun: z._default(firstRun, 'alert'),
    }),
  ),
});

/** Any name: it is encoded where it goes into a key (state/limits.ts `nameInKey`). */
const destinationName = nonEmpty;

const emailAddress = z
  .string()
  .check(z.regex(/^[^\s@<>]+@[^\s@<>]+\.[^\s@<>]+$/, 'expected an e-mail address'));

const slackDestination = z.strictObject({
  type: z.literal('slack'),
  url: secretOr(httpUrl),
});

const emailDestination = z.strictObject({
  type: z.literal('email'),
  provider: z.enum(['generic', 'sendgrid', 'postmark']),
  /** Required for `generic`; defaults to the provider's API for the others. */
  url: z.optional(secretOr(httpUrl)),
  /** Bearer token (generic, sendgrid) or server token (postmark). */
  apiKey: z.optional(secretOr(nonEmpty)),
  from: emailAddress,
  to: z.array(emailAddress).check(z.minLength(1)),
  /** Postmark message stream; default `outbound`. */
  messageStream: z.optional(nonEmpty),
});

const webhookDestination = z.strictObject({
  type: z.literal('webhook'),
  url: secretOr(httpUrl),
  signingSecret: z.optional(secretOr(nonEmpty)),
  headers: z.optional(
    z.record(z.string().check(z.regex(/^[A-Za-z0-9-]+$/, 'expected a header name')), secretOr(z.string())),
  ),
});

const consoleDestination = z.strictObject({ type: z.literal('console') });

export const destinationSchema = z.discriminatedUnion('type', [
  slackDestination,
  emailDestination,
  webhookDestination,
  consoleDestination,
]);
export type DestinationConfig = z.infer<typeof destinationSchema>;

const sourceRef = z
  .string()
  .check(
    z.regex(/^(tenant|group:\d+|credentials:.+)$/, 'expected tenant, group:<id> or credentials:<domain>'),
  );

export const matchSchema = z.strictObject({
  kind: z.optional(z.enum(['event', 'credential'])),
  sources: z.optional(z.array(sourceRef)),
  severity: z.optional(
    z.union([z.strictObject({ gte: severity }), z.strictObject({ in: z.array(severity) })]),
  ),
  types: z.optional(z.array(eventType)),
  tags: z.optional(
    z.strictObject({
      any: z.optional(z.array(nonEmpty)),
      all: z.optional(z.array(nonEmpty)),
      none: z.optional(z.array(nonEmpty)),
    }),
  ),
  identifiers: z.optional(z.array(z.union([z.int(), nonEmpty]))),
  domains: z.optional(z.array(domainName)),
});
export type Match = z.infer<typeof matchSchema>;

const routeSchema = z.strictObject({
  name: nonEmpty,
  match: z._default(matchSchema, {}),
  /** Empty with `stop`: the items it matches go nowhere (a drop rule). */
  to: z.array(destinationName),
  stop: z._default(z.boolean(), false),
});
export type Route = z.infer<typeof routeSchema>;

const silenceSchema = z.strictObject({
  name: z.optional(nonEmpty),
  match: z._default(matchSchema, {}),
  until: timestamp,
  reason: nonEmpty,
});
export type Silence = z.infer<typeof silenceSchema>;

export const configSchema = z.strictObject({
  $schema: z.optional(z.string()),
  sources: z._default(sourcesSchema, { identifierGroups: [] }),
  destinations: z.record(destinationName, destinationSchema),
  routes: z._default(z.array(routeSchema), []),
  silences: z._default(z.array(silenceSchema), []),
  passwords: z._default(z.enum(['masked', 'hidden', 'clear']), 'masked'),
  digest: z._default(
    z.strictObject({
      threshold: z._default(z.int().check(z.minimum(1)), 5),
      maxItems: z._default(z.int().check(z.minimum(1)), 20),
    }),
    { threshold: 5, maxItems: 20 },
  ),
  /** Where a destination that refuses for good is reported (once). */
  ops: z.optional(z.strictObject({ to: z.array(destinationName) })),
});
export type AlertsConfig = z.infer<typeof configSchema>;
export type PasswordPolicy = AlertsConfig['passwords'];

export interface ConfigCheck {
  config?: AlertsConfig;
  /** Path-precise problems, e.g. `routes[1].match.colour: unknown key`. */
  errors: string[];
  warnings: string[];
}

function line(issue: ItemIssue): string {
  return issue.path ? `${issue.path}: ${issue.message}` : issue.message;
}

type Json = Record<string, unknown>;
const objectAt = (value: unknown): Json =>
  value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : {};
const listAt = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

/**
 * Checks what the schema cannot: references between parts of the config. It reads the raw input,
 * defensively, so a wrong route target is reported in the same pass as a shape error elsewhere.
 */
function checkReferences(input: unknown, errors: string[]): void {
  const root = objectAt(input);
  const sources = objectAt(root.sources);
  const names = new Set(Object.keys(objectAt(root.destinations)));
  const tenant = sources.tenantEvents;
  const tenantOn = tenant !== undefined && objectAt(tenant).enabled !== false;
  const groupIds = listAt(sources.identifierGroups).map((g) => objectAt(g).id);
  const domains = new Set(
    listAt(objectAt(sources.credentials).domains).flatMap((d) =>
      typeof d === 'string' ? [d.toLowerCase()] : [],
    ),
  );
  const knownSource = (ref: string) =>
    ref === 'tenant'
      ? tenantOn
      : ref.startsWith('group:')
        ? groupIds.includes(Number(ref.slice(6)))
        : domains.has(ref.slice('credentials:'.length).toLowerCase());
  const checkTargets = (path: string, to: unknown) => {
    listAt(to).forEach((name, j) => {
      if (typeof name === 'string' && !names.has(name))
        errors.push(`${path}[${j}]: no destination named ${JSON.stringify(name)}`);
    });
  };
  const checkSources = (path: string, match: unknown) => {
    listAt(objectAt(match).sources).forEach((ref, i) => {
      if (typeof ref === 'string' && /^(tenant|group:\d+|credentials:.+)$/.test(ref) && !knownSource(ref))
        errors.push(`${path}.match.sources[${i}]: ${ref} is not a configured source`);
    });
  };
  const routeNames = new Set<unknown>();
  listAt(root.routes).forEach((raw, i) => {
    const route = objectAt(raw);
    if (typeof route.name === 'string' && routeNames.has(route.name))
      errors.push(`routes[${i}].name: duplicate route name ${JSON.stringify(route.name)}`);
    routeNames.add(route.name);
    checkTargets(`routes[${i}].to`, route.to);
    checkSources(`routes[${i}]`, route.match);
  });
  checkTargets('ops.to', objectAt(root.ops).to);
  listAt(root.silences).forEach((silence, i) => {
    checkSources(`silences[${i}]`, objectAt(silence).match);
  });
  groupIds.forEach((id, i) => {
    if (typeof id === 'number' && groupIds.indexOf(id) !== i)
      errors.push(`sources.identifierGroups[${i}].id: group ${id} is listed twice`);
  });
  for (const [name, raw] of Object.entries(objectAt(root.destinations))) {
    const dest = objectAt(raw);
    if (dest.type !== 'email') continue;
    if (dest.provider === 'generic' && dest.url === undefined)
      errors.push(`destinations.${name}.url: required for the generic e-mail provider`);
    if ((dest.provider === 'sendgrid' || dest.provider === 'postmark') && dest.apiKey === undefined)
      errors.push(`destinations.${name}.apiKey: required for ${dest.provider}`);
  }
}

const RETENTION_MS = RECORD_RETENTION_DAYS * 86_400_000;
/** Pages of 100 cost one global search each, as smaller ones do (upstream-facts.md). */
const QUOTA_PAGE = 100;

/** What is allowed but probably not meant. */
function checkWarnings(config: AlertsConfig, now: Date, warnings: string[]): void {
  const used = new Set([...config.routes.flatMap((r) => r.to), ...(config.ops?.to ?? [])]);
  const emptyLists = (path: string, match: Match) => {
    const lists = {
      sources: match.sources,
      'severity.in': match.severity && 'in' in match.severity ? match.severity.in : undefined,
      types: match.types,
      identifiers: match.identifiers,
      domains: match.domains,
    };
    for (const [key, list] of Object.entries(lists)) {
      if (list?.length === 0) warnings.push(`${path}.match.${key}: an empty list matches nothing`);
    }
  };
  config.routes.forEach((route, i) => {
    emptyLists(`routes[${i}]`, route.match);
    if (route.to.length === 0 && !route.stop)
      warnings.push(`routes[${i}].to: empty and without "stop": the route changes nothing`);
  });
  config.silences.forEach((silence, i) => {
    emptyLists(`silences[${i}]`, silence.match);
    if (Date.parse(silence.until) <= now.getTime()) {
      warnings.push(`silences[${i}].until: ${silence.until} has passed; the silence is ignored`);
    }
  });
  for (const name of Object.keys(config.destinations)) {
    if (!used.has(name)) warnings.push(`destinations.${name}: no route sends to it`);
  }
  const { tenantEvents, identifierGroups, credentials } = config.sources;
  const lookbacks: [string, string][] = [
    ...(tenantEvents ? [['sources.tenantEvents.lookback', tenantEvents.lookback] as [string, string]] : []),
    ...identifierGroups.map((g, i): [string, string] => [
      `sources.identifierGroups[${i}].lookback`,
      g.lookback,
    ]),
    ...(credentials ? [['sources.credentials.lookback', credentials.lookback] as [string, string]] : []),
  ];
  for (const [path, lookback] of lookbacks) {
    if ((parseDuration(lookback) ?? 0) > RETENTION_MS) {
      warnings.push(
        `${path}: ${lookback} is longer than the ${RECORD_RETENTION_DAYS}-day retention of delivery records: only a stream's first walk looks back that far (a walk that restarts resumes from the stream's last position, so nothing is sent twice)`,
      );
    }
  }
  if (credentials && credentials.pageSize < QUOTA_PAGE) {
    warnings.push(
      `sources.credentials.pageSize: ${credentials.pageSize} is below ${QUOTA_PAGE}; every global search costs quota whatever its size, so smaller pages spend more of it`,
    );
  }
  if (credentials?.domains.length === 0)
    warnings.push('sources.credentials.domains: empty; no credentials are polled');
  if (!tenantEvents?.enabled && !identifierGroups.length && !credentials?.domains.length) {
    warnings.push('sources: nothing is polled (no tenantEvents, identifierGroups or credentials)');
  }
  if (config.passwords === 'clear')
    warnings.push('passwords: "clear" sends cleartext passwords to every destination');
}

const DESTINATION_TYPES = ['slack', 'email', 'webhook', 'console'] as const;

/** Validates a parsed config; never throws. Every problem is found in one pass. */
export function checkConfig(input: unknown, now: Date = new Date()): ConfigCheck {
  const parsed = configSchema.safeParse(input);
  const errors = parsed.success
    ? []
    : describeIssues(parsed.error.issues, input, { discriminators: { type: DESTINATION_TYPES } }).map(line);
  checkReferences(input, errors);
  const warnings: string[] = [];
  if (!parsed.success || errors.length) return { errors, warnings };
  checkWarnings(parsed.data, now, warnings);
  return { config: parsed.data, errors, warnings };
}

/** Parses config text, throwing a ConfigError that lists every problem. */
export function parseConfig(
  text: string,
  where = 'config',
  now: Date = new Date(),
): { config: AlertsConfig; warnings: string[] } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`${where} is not valid JSON: ${(error as Error).message}`);
  }
  const check = checkConfig(json, now);
  if (!check.config) {
    throw new ConfigError(
      `${where} is invalid (${check.errors.length} problem${check.errors.length > 1 ? 's' : ''})`,
      check.errors,
    );
  }
  return { config: check.config, warnings: check.warnings };
}

export async function loadConfigFile(path: string, now: Date = new Date()) {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new ConfigError(
      `alert config ${path} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
  return parseConfig(text, path, now);
}

/** The JSON Schema of the config, generated from the zod schema above. */
export function configJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(configSchema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
}

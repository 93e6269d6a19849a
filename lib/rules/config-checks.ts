/**
 * The checks of an alert config that its schema cannot make (config-parse.ts runs both in one pass):
 * references between its parts, read from the raw input so a wrong route target is reported with
 * any shape error; and warnings for what is allowed but probably not meant. Each names its path.
 * The `identity` key's checks are in config-identity.ts: its errors run with these for a config
 * that has the key (config.ts), its warnings only where a person reads them (`config validate`,
 * synth), so the workers do not carry them.
 * `missingSecrets` and `urlSecretProblems` are what `config validate --secrets` adds.
 */
import { kindOf } from '../destinations/kinds.ts';
import { RECORD_RETENTION_DAYS } from '../model.ts';
import { parseDuration } from './duration.ts';
import { SOURCE_REF } from './match-schema.ts';
import type { AlertsConfig, Match } from './schema.ts';
import { isHttpUrl, notUrlProblem } from './schema-parts.ts';

type Json = Record<string, unknown>;
const objectAt = (value: unknown): Json =>
  value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : {};
const listAt = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

/**
 * Checks what the schema cannot: references between parts of the config. It reads the raw input,
 * defensively, so a wrong route target is reported in the same pass as a shape error elsewhere.
 */
export function checkReferences(input: unknown, errors: string[]): void {
  const root = objectAt(input);
  const names = new Set(Object.keys(objectAt(root.destinations)));
  const tenants = listAt(root.tenants).map(objectAt);
  // Every configured stream, by id: the top level's, then each tenant's (poll/ids.ts).
  const streams = new Set<string>();
  const addSources = (path: string, sources: Json, tenant?: number) => {
    const at = (id: string) =>
      tenant === undefined ? id : id.replace(/^(tenant|group|credentials)/, `$1:${tenant}`);
    const on = sources.tenantEvents !== undefined && objectAt(sources.tenantEvents).enabled !== false;
    if (on) streams.add(tenant === undefined ? 'tenant' : `tenant:${tenant}`);
    // A set, not indexOf in the loop: a config may list tens of thousands of groups.
    const groupIds = new Set<number>();
    listAt(sources.identifierGroups).forEach((g, i) => {
      const id = objectAt(g).id;
      if (typeof id !== 'number') return;
      if (groupIds.has(id)) errors.push(`${path}.identifierGroups[${i}].id: group ${id} is listed twice`);
      groupIds.add(id);
      streams.add(at(`group:${id}`));
    });
    for (const d of listAt(objectAt(sources.credentials).domains))
      if (typeof d === 'string') streams.add(at(`credentials:${d.toLowerCase()}`));
  };
  addSources('sources', objectAt(root.sources));
  const tenantIds = new Set<number>();
  const tenantNames = new Set<string>();
  tenants.forEach((t, i) => {
    if (typeof t.id === 'number') {
      if (tenantIds.has(t.id)) errors.push(`tenants[${i}].id: tenant ${t.id} is listed twice`);
      tenantIds.add(t.id);
      addSources(`tenants[${i}].sources`, objectAt(t.sources), t.id);
    }
    if (typeof t.name === 'string') {
      const name = t.name.toLowerCase();
      tenantNames.add(name);
    }
  });
  const knownSource = (ref: string) => {
    const lower = ref.replace(
      /^(credentials:(\d+:)?)(.*)$/,
      (_m, head: string, _t, domain: string) => head + domain.toLowerCase(),
    );
    return streams.has(lower);
  };
  const checkTargets = (path: string, to: unknown) => {
    listAt(to).forEach((name, j) => {
      if (typeof name === 'string' && !names.has(name))
        errors.push(`${path}[${j}]: no destination named ${JSON.stringify(name)}`);
    });
  };
  const checkMatch = (path: string, raw: unknown) => {
    const match = objectAt(raw);
    listAt(match.sources).forEach((ref, i) => {
      if (typeof ref === 'string' && SOURCE_REF.test(ref) && !knownSource(ref))
        errors.push(`${path}.match.sources[${i}]: ${ref} is not a configured source`);
    });
    listAt(match.tenants).forEach((ref, i) => {
      const known =
        typeof ref === 'number'
          ? tenantIds.has(ref)
          : typeof ref === 'string' &&
            (tenantNames.has(ref.trim().toLowerCase()) || tenantIds.has(Number(ref)));
      if ((typeof ref === 'number' || typeof ref === 'string') && !known)
        errors.push(
          `${path}.match.tenants[${i}]: ${JSON.stringify(ref)} is not a configured tenant (${tenants.length ? 'tenants lists them' : 'the config has no tenants'})`,
        );
    });
  };
  const routeNames = new Set<unknown>();
  listAt(root.routes).forEach((raw, i) => {
    const route = objectAt(raw);
    if (typeof route.name === 'string' && routeNames.has(route.name))
      errors.push(`routes[${i}].name: duplicate route name ${JSON.stringify(route.name)}`);
    routeNames.add(route.name);
    checkTargets(`routes[${i}].to`, route.to);
    checkMatch(`routes[${i}]`, route.match);
  });
  checkTargets('ops.to', objectAt(root.ops).to);
  listAt(root.silences).forEach((silence, i) => {
    checkMatch(`silences[${i}]`, objectAt(silence).match);
  });
}

/**
 * Every `{ "secret": "NAME" }` of a config that the secret object lacks (or holds as anything but
 * a non-empty string), each named by its path as start names it (`destinations.soc.url`,
 * `identity.providers.corp.clientSecret`, `tenants[0].identity.providers.shop.token`). Names only:
 * no value is ever put in a problem.
 */
export function missingSecrets(config: unknown, secrets: Record<string, unknown>): string[] {
  const problems: string[] = [];
  const walk = (value: unknown, path: string) => {
    if (Array.isArray(value)) {
      for (const [i, v] of value.entries()) walk(v, `${path}[${i}]`);
      return;
    }
    if (value === null || typeof value !== 'object') return;
    const entries = Object.entries(value);
    const [only] = entries;
    if (entries.length === 1 && only?.[0] === 'secret' && typeof only[1] === 'string') {
      const found = secrets[only[1]];
      if (typeof found !== 'string' || found === '')
        problems.push(
          `${path}: secret ${JSON.stringify(only[1])} is not a non-empty string in the secret object (SECRET_ID / SECRETS_FILE)`,
        );
      return;
    }
    for (const [key, v] of entries) walk(v, path ? `${path}.${key}` : key);
  };
  walk(config, '');
  return problems;
}

/**
 * Each destination `url` held as a secret whose value is not an absolute http(s) URL, as start
 * finds it (deliver/destinations.ts): by path and secret name, never the value. A missing one is
 * missingSecrets' to name.
 */
export function urlSecretProblems(config: AlertsConfig, secrets: Record<string, unknown>): string[] {
  const problems: string[] = [];
  for (const [name, destination] of Object.entries(config.destinations)) {
    const url = (destination as { url?: unknown }).url;
    const secret = typeof url === 'object' && url !== null ? (url as { secret?: unknown }).secret : undefined;
    const found = typeof secret === 'string' ? secrets[secret] : undefined;
    if (typeof found === 'string' && found !== '' && !isHttpUrl(found))
      problems.push(notUrlProblem(`destinations.${name}.url`, secret as string));
  }
  return problems;
}

const RETENTION_MS = RECORD_RETENTION_DAYS * 86_400_000;
/** Pages of 100 cost one global search each, as smaller ones do (the upstream's quota). */
const QUOTA_PAGE = 100;

/** What is allowed but probably not meant. */
export function checkWarnings(config: AlertsConfig, now: Date, warnings: string[]): void {
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
  for (const [name, destination] of Object.entries(config.destinations)) {
    if (!used.has(name)) warnings.push(`destinations.${name}: no route sends to it`);
    warnings.push(...(kindOf(destination.type).warnings?.(destination, `destinations.${name}`) ?? []));
  }
  // Allowed (docs/configuration.md names no rule), but a route or silence naming it matches them all.
  const seen = new Map<string, number>();
  (config.tenants ?? []).forEach((t, i) => {
    const first = seen.get(t.name.toLowerCase());
    if (first !== undefined)
      warnings.push(
        `tenants[${i}].name: ${JSON.stringify(t.name)} is also the name of tenants[${first}]: a route or silence naming it matches both`,
      );
    else seen.set(t.name.toLowerCase(), i);
  });
  for (const kind of ['events', 'credentials'] as const) {
    if (typeof config.heartbeat?.[kind] === 'string')
      warnings.push(
        `heartbeat.${kind}: a heartbeat URL is a secret (anyone who has it can ping it, or make it fail): keep it in the secret object ({ "secret": "NAME" })`,
      );
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

/**
 * Destinations with their secrets resolved: every `{ "secret": "NAME" }` in the config looked up
 * in the secret object once, at start, so a missing secret fails there, naming the destination
 * and the secret, and never mid-delivery. A destination's `url` held as a secret is checked there
 * too, as the schema checks one written in the config: an absolute http(s) URL. Every resolved URL
 * and key is registered with the log redactor (a Slack webhook URL is itself a credential). Each
 * kind resolves its own (lib/destinations/<kind>/index.ts).
 */
import { standInFor } from '../destinations/console/index.ts';
import { kindOf, type ResolvedDestination, resolveWith } from '../destinations/kinds.ts';
import { ConfigError } from '../errors.ts';
import { redactor } from '../log.ts';
import type { AlertsConfig, DestinationConfig, SecretRef } from '../rules/config.ts';
import { isHttpUrl, notUrlProblem } from '../rules/schema-parts.ts';
import type { SecretObject } from '../secrets.ts';

export type { ResolvedDestination } from '../destinations/kinds.ts';

/** A value or its secret, looked up (a missing one added to `problems`), then redacted from logs. */
export function resolveValue(
  value: string | SecretRef,
  secrets: SecretObject,
  path: string,
  problems: string[],
): string {
  const found = typeof value === 'string' ? value : secrets[value.secret];
  if (typeof found !== 'string' || found === '') {
    problems.push(
      `${path}: secret "${(value as SecretRef).secret}" is not a non-empty string in the secret object (SECRET_ID / SECRETS_FILE)`,
    );
    return '';
  }
  redactor.add(found);
  return found;
}

/**
 * The destination with its secrets looked up: a missing one added to `problems`, a `url` secret
 * that is not a URL to `notUrls` (every kind names its URL `url`).
 */
export function resolveDestination(
  name: string,
  config: DestinationConfig,
  secrets: SecretObject,
  problems: string[],
  notUrls: string[] = problems,
): ResolvedDestination {
  return resolveWith(name, config, (value, key) => {
    const path = `destinations.${name}.${key}`;
    const found = resolveValue(value, secrets, path, problems);
    if (key === 'url' && typeof value !== 'string' && found && !isHttpUrl(found))
      notUrls.push(notUrlProblem(path, value.secret));
    return found;
  });
}

/**
 * Some kinds limit the rate per URL or per routing key, not per destination (their pace's
 * `sharedBy`): when several destinations share one, each paces at that many times the interval,
 * so together they keep within it. Secrets are compared only once resolved, which is why this is
 * done here.
 */
export function countSharing(destinations: Map<string, ResolvedDestination>): void {
  const keyOf = (d: ResolvedDestination) => kindOf(d.type).pace?.(d)?.sharedBy;
  const counts = new Map<string, number>();
  for (const d of destinations.values()) {
    const key = keyOf(d);
    if (key) counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  for (const d of destinations.values()) {
    const key = keyOf(d);
    if (key) d.sharing = counts.get(key) ?? 1;
  }
}

/**
 * Every destination of the config as a console that says what it stands for: a dry run prints
 * each destination's alerts in the terminal, needs none of their secrets, and sends nothing. With
 * `keepIn`, each message's items are left there for `preview` (destinations/console/body.ts).
 */
export function dryRunDestinations(config: AlertsConfig, keepIn?: string): Map<string, ResolvedDestination> {
  return new Map(
    Object.entries(config.destinations).map(([name, d]) => [name, standInFor(name, d.type, keepIn)]),
  );
}

/** Every destination of the config, resolved; a ConfigError lists each missing or malformed secret. */
export function resolveDestinations(
  config: AlertsConfig,
  secrets: SecretObject,
): Map<string, ResolvedDestination> {
  const problems: string[] = [];
  const notUrls: string[] = [];
  const out = new Map<string, ResolvedDestination>();
  for (const [name, destination] of Object.entries(config.destinations)) {
    out.set(name, resolveDestination(name, destination, secrets, problems, notUrls));
  }
  countSharing(out);
  const all = [...problems, ...notUrls];
  const what = problems.length ? (notUrls.length ? 'missing or not a URL' : 'missing') : 'not a URL';
  if (all.length)
    throw new ConfigError(
      `${all.length === 1 ? 'a destination secret is' : `${all.length} destination secrets are`} ${what}`,
      [
        ...all,
        ...(problems.length
          ? [
              'to send for real, put the secrets in a JSON file and set SECRETS_FILE=<that file> (SECRET_ID on AWS); to try this config locally with nothing sent, run npm start -- --dry-run',
            ]
          : []),
      ],
    );
  return out;
}

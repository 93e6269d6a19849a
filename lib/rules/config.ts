/**
 * Reading and checking the alert config (docs/configuration.md): its shape (schema.ts, one strict
 * zod schema) and what a schema cannot check (config-checks.ts, config-identity.ts), in one pass,
 * every problem named by its path, e.g. `routes[1].match.colour: unknown key` (config-parse.ts
 * says how). This is the whole check, for the CLI, synth and tests; a worker's start reads its
 * config through source.ts, which loads this only for a config with `identity`.
 */

import { checkWithIdentity } from './config-identity.ts';
import { type ConfigCheck, checkedConfig, configJson } from './config-parse.ts';
import type { AlertsConfig } from './schema.ts';

export { type ConfigCheck, LISTED_PROBLEMS, listedProblems } from './config-parse.ts';
export * from './schema.ts';

/** Validates a parsed config; never throws. Every problem is found in one pass. */
export function checkConfig(input: unknown, now: Date = new Date()): ConfigCheck {
  return checkWithIdentity(input, now);
}

/** Parses config text, throwing a ConfigError that lists every problem. */
export function parseConfig(
  text: string,
  where = 'config',
  now: Date = new Date(),
): { config: AlertsConfig; warnings: string[] } {
  return checkedConfig(checkConfig(configJson(text, where), now), where);
}

/**
 * Reading and checking the alert config (interface.md section 3): its shape (schema.ts, one strict
 * zod schema) and what a schema cannot check (config-checks.ts), in one pass, every problem named
 * by its path, e.g. `routes[1].match.colour: unknown key`.
 */

import { readFile } from 'node:fs/promises';
import { ConfigError } from '../errors.ts';
import { describeIssues, type ItemIssue } from '../upstream/validate.ts';
import { checkReferences, checkWarnings } from './config-checks.ts';
import { parseJson } from './json.ts';
import { type AlertsConfig, configSchema } from './schema.ts';

export * from './schema.ts';

export interface ConfigCheck {
  config?: AlertsConfig;
  /** Path-precise problems, e.g. `routes[1].match.colour: unknown key`. */
  errors: string[];
  warnings: string[];
}

function line(issue: ItemIssue): string {
  return issue.path ? `${issue.path}: ${issue.message}` : issue.message;
}

const DESTINATION_TYPES = [
  'slack',
  'email',
  'webhook',
  'teams',
  'discord',
  'pagerduty',
  'jira',
  'servicenow',
  'splunk',
  'sentinel',
  'console',
] as const;

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
    json = parseJson(text);
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

/**
 * The alert config at synth: read the file named in context, validate it with the product's own
 * schema (lib/rules/config.ts), and stage it as a Lambda layer directory, so the pollers find it
 * at /opt/alerts.config.json. An invalid config stops synth with every path-precise problem, so a
 * typo never reaches a deployed function that would fail at each cold start.
 *
 * Why a layer rather than a copy in each bundle or an environment variable: environment variables
 * are capped at 4 KB in total; a layer needs no shell hook around esbuild, is shared by both
 * pollers, changes without re-bundling the code, and can be checked in a template test that skips
 * bundling.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { ConfigError } from '../lib/errors.ts';
import { type AlertsConfig, parseConfig } from '../lib/rules/config.ts';
import { checkIdentityWarnings } from '../lib/rules/config-identity.ts';

/** The project root: `cdk.json`, `package.json` and the default config live here. */
export const PROJECT_ROOT = resolve(import.meta.dirname, '..');

/** The file name inside the layer; Lambda mounts layers under /opt. */
export const CONFIG_FILE_NAME = 'alerts.config.json';
export const CONFIG_PATH_IN_LAMBDA = `/opt/${CONFIG_FILE_NAME}`;

export interface DeployableConfig {
  config: AlertsConfig;
  /** The file as given (absolute). */
  source: string;
  /** A directory holding only the validated file, for the layer asset. */
  layerDir: string;
  warnings: string[];
  /** Names the config looks up in the secret object (`{ "secret": "NAME" }`). */
  secretNames: string[];
}

/** Layer directories staged by this process, removed when it exits. */
const staged = new Set<string>();

/** Every `{ "secret": "NAME" }` in the config, sorted, once each. */
export function secretNamesIn(value: unknown, found = new Set<string>()): string[] {
  if (Array.isArray(value)) {
    for (const item of value) secretNamesIn(item, found);
  } else if (value && typeof value === 'object') {
    const entries = Object.entries(value);
    const [only] = entries;
    if (entries.length === 1 && only?.[0] === 'secret' && typeof only[1] === 'string') found.add(only[1]);
    else for (const [, v] of entries) secretNamesIn(v, found);
  }
  return [...found].sort();
}

/**
 * Reads and validates the alert config; throws an Error whose message says what to do: create
 * the file, or fix each listed problem.
 *
 * @example
 * const { layerDir, secretNames } = loadDeployableConfig('alerts.config.json');
 */
export function loadDeployableConfig(path: string, now: Date = new Date()): DeployableConfig {
  const source = isAbsolute(path) ? path : resolve(PROJECT_ROOT, path);
  // As the operator would type it: relative to where they are, unless that climbs out of it.
  const fromCwd = relative(process.cwd(), source);
  const shown = fromCwd && !fromCwd.startsWith('..') && !isAbsolute(fromCwd) ? fromCwd : source;
  if (!existsSync(source)) {
    throw new Error(
      `alert config ${shown} does not exist: create it (start from infra/alerts.config.example.json; \`npm run cli -- config validate ${shown}\` checks it) or pass -c alertsConfig=<path>`,
    );
  }
  const text = readFileSync(source, 'utf8');
  let parsed: ReturnType<typeof parseConfig>;
  try {
    parsed = parseConfig(text, `alert config ${shown}`, now);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    const details =
      error.problems.length > 1 || error.problems[0] !== error.message
        ? `\n${error.problems.map((p) => `  - ${p}`).join('\n')}`
        : '';
    throw new Error(
      `${error.message}${details}\nFix the file, or pass -c alertsConfig=<path> to use another.`,
    );
  }
  const layerDir = mkdtempSync(join(tmpdir(), 'exposure-alerts-config-'));
  // Synth copies the directory into the cloud assembly; the original is not needed afterwards.
  // One exit listener for all of them: a test file builds the app a dozen times.
  if (staged.size === 0)
    process.once('exit', () => {
      for (const dir of staged) rmSync(dir, { recursive: true, force: true });
    });
  staged.add(layerDir);
  // Ship the text that was validated, byte for byte: the function validates it again at cold start.
  writeFileSync(join(layerDir, CONFIG_FILE_NAME), text);
  return {
    config: parsed.config,
    source,
    layerDir,
    // With the identity warnings, which only synth and `config validate` compute.
    warnings: [...parsed.warnings, ...identityWarnings(parsed.config)],
    secretNames: secretNamesIn(parsed.config),
  };
}

function identityWarnings(config: AlertsConfig): string[] {
  const warnings: string[] = [];
  checkIdentityWarnings(config, warnings);
  return warnings;
}

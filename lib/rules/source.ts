/**
 * Where the alert config comes from: `ALERTS_CONFIG`, else ./alerts.config.json, else the built-in
 * demo config (so `npm start` runs with nothing set; there it names the emulator's identity
 * providers too). On Lambda, `ALERTS_CONFIG` names the file in the config layer.
 *
 * A config file is checked as config.ts checks it; one without `identity` without loading the
 * identity schema and checks (config-identity.ts), which only a config with the key needs.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type { Environment } from '../env.ts';
import { ConfigError } from '../errors.ts';
import { lazily } from '../lazy.ts';
import { checkedConfig, checkWithoutIdentity, configJson, hasIdentity } from './config-parse.ts';
import type { AlertsConfig } from './schema.ts';

export const DEFAULT_CONFIG_FILE = 'alerts.config.json';

/** The whole check, with the identity schema and its checks: for a config with `identity`. */
const wholeCheck = lazily(
  'the identity config schema and checks (rules/config-identity.ts, identity/schema.ts)',
  () => import('./config-identity.ts'),
);

/** Reads and checks a config file, throwing a ConfigError that lists every problem. */
export async function loadConfigFile(
  path: string,
  now: Date = new Date(),
): Promise<{ config: AlertsConfig; warnings: string[] }> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new ConfigError(
      `alert config ${path} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
  const json = configJson(text, path);
  const check = hasIdentity(json)
    ? (await wholeCheck()).checkWithIdentity(json, now)
    : checkWithoutIdentity(json, now);
  return checkedConfig(check, path);
}

/** The alert config and where it came from; each warning goes to `warn`, prefixed with the file. */
export async function loadAlertsConfig(
  env: Pick<Environment, 'alertsConfig' | 'localEmulatorUrl'>,
  warn?: (text: string) => void,
): Promise<{ config: AlertsConfig; source: string }> {
  const path = env.alertsConfig ?? (existsSync(DEFAULT_CONFIG_FILE) ? DEFAULT_CONFIG_FILE : undefined);
  if (!path) {
    // Loaded only here: a deployment always names its config, and its start need not carry the demo.
    const { demoConfig, demoConfigAt } = await import('./demo-config.ts');
    return {
      // Under npm start, with the emulator's identity providers (demo-config.ts).
      config: env.localEmulatorUrl ? demoConfigAt(env.localEmulatorUrl) : demoConfig,
      source: 'built-in demo config',
    };
  }
  const { config, warnings } = await loadConfigFile(path);
  for (const warning of warnings) warn?.(`${path}: ${warning}`);
  return { config, source: path };
}

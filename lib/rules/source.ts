/**
 * Where the alert config comes from: `ALERTS_CONFIG`, else ./alerts.config.json, else the built-in
 * demo config (so `npm start` runs with nothing set; there it names the emulator's identity
 * providers too). On Lambda, `ALERTS_CONFIG` names the file in the config layer.
 */
import { existsSync } from 'node:fs';
import type { Environment } from '../env.ts';
import { type AlertsConfig, loadConfigFile } from './config.ts';

export const DEFAULT_CONFIG_FILE = 'alerts.config.json';

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

/**
 * The built-in demo config, used when neither ALERTS_CONFIG nor `alerts.config.json` exists:
 * everything goes to the terminal, so `npm start` and `preview` show something useful on a fresh
 * checkout without a webhook, a secret or a file.
 */
import { consoleKind } from '../destinations/console/index.ts';
import { type AlertsConfig, configSchema } from './config.ts';

/** The demo config as a user would write it (also what `config schema` users can start from). */
export const demoConfigInput = {
  sources: {
    tenantEvents: { enabled: true, lookback: 'PT24H' },
    credentials: { domains: ['acme.test', 'example.com'], lookback: 'P7D' },
  },
  destinations: { terminal: { type: consoleKind.type } },
  routes: [{ name: 'everything', match: {}, to: ['terminal'] }],
  passwords: 'masked',
} as const;

/** Parsed through the same schema as a user's config, so every default is filled in. */
export const demoConfig: AlertsConfig = configSchema.parse(demoConfigInput);

/**
 * The built-in demo config, used when neither ALERTS_CONFIG nor `alerts.config.json` exists:
 * everything goes to the terminal, so `npm start` and `preview` show something useful on a fresh
 * checkout without a webhook, a secret or a file.
 *
 * Under `npm start`, whose emulator also stands in for an Entra ID directory and an Okta org
 * (lib/emulator/identity), the demo config names those two providers too ({@link demoConfigAt}),
 * so its credential alerts carry verdicts; their secrets are the local run's (cli/local.ts).
 */
import { consoleKind } from '../destinations/console/index.ts';
import { DEMO_ENTRA, DEMO_OKTA } from '../emulator/identity/demo-providers.ts';
import { identityUrls } from '../emulator/identity/paths.ts';
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

/**
 * The demo config's `identity`: acme.test's logins looked up in the emulator's Entra ID directory,
 * example.com's in its Okta org, at the emulator's origin (known only once it listens).
 */
/**
 * The demo providers' rate: the emulator stands in for Graph and Okta on this machine, so its
 * lanes go at the pace of the emulator's upstream (start.ts LOCAL_RATES), not a real directory's
 * default of 5 a second, which would hold the first credentials cycle for seconds.
 */
const DEMO_IDENTITY_RATE = 40;

export function demoIdentityInput(emulatorUrl: string) {
  const urls = identityUrls(emulatorUrl);
  return {
    providers: {
      [DEMO_ENTRA.name]: {
        type: 'entra',
        tenantId: DEMO_ENTRA.tenantId,
        clientId: DEMO_ENTRA.clientId,
        clientSecret: { secret: DEMO_ENTRA.secretName },
        domains: [DEMO_ENTRA.domain],
        loginUrl: urls.loginUrl,
        graphUrl: urls.graphUrl,
        requestsPerSecond: DEMO_IDENTITY_RATE,
      },
      [DEMO_OKTA.name]: {
        type: 'okta',
        orgUrl: urls.orgUrl,
        token: { secret: DEMO_OKTA.secretName },
        domains: [DEMO_OKTA.domain],
        userRisk: true,
        requestsPerSecond: DEMO_IDENTITY_RATE,
      },
    },
  } as const;
}

/** The demo config with the identity providers of the emulator at `emulatorUrl` (npm start's). */
export function demoConfigAt(emulatorUrl: string): AlertsConfig {
  return configSchema.parse({ ...demoConfigInput, identity: demoIdentityInput(emulatorUrl) });
}

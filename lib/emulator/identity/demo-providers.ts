/**
 * The demo's two identity providers, as `npm start`'s emulator serves them and its built-in demo
 * config names them: an Entra ID directory for acme.test and an Okta org for example.com (and its
 * subdomains), with the app registration, token and secret names they go by. Fixed strings, like
 * the emulator's demo upstream tokens: they open nothing but the local stand-in. Kept apart from
 * the directory (demo-directory.ts) so the config can name them without loading the emulator.
 */

export const DEMO_ENTRA = {
  /** The provider's name in the demo config. */
  name: 'corp',
  domain: 'acme.test',
  tenantId: '0d3c9a51-6b2e-4f7a-8c15-a4e2b9d07c63',
  tenantDomain: 'acmetest.onmicrosoft.com',
  clientId: '5b7e2f90-1c4d-4a8b-b3e6-92d0f5a1c7e4',
  clientSecret: 'emu-entra-client-secret',
  /** The secret object's name for it. */
  secretName: 'demoEntraClientSecret',
} as const;

export const DEMO_OKTA = {
  name: 'shop',
  domain: 'example.com',
  token: 'emu-okta-api-token',
  secretName: 'demoOktaToken',
} as const;

/** The secret object's entries the demo config's providers refer to. */
export const DEMO_IDENTITY_SECRETS: Readonly<Record<string, string>> = {
  [DEMO_ENTRA.secretName]: DEMO_ENTRA.clientSecret,
  [DEMO_OKTA.secretName]: DEMO_OKTA.token,
};

/**
 * Where the identity stand-in's providers are under the origin it is served at, on their own (no
 * import): the demo config names them without loading the stand-in.
 */

/** Each provider's routes, under the stand-in's origin. */
export const IDENTITY_PATHS = {
  loginUrl: '/entra/login',
  graphUrl: '/entra/graph',
  orgUrl: '/okta',
} as const;

/** A config's URLs for a stand-in served at `origin`: Entra's `loginUrl` and `graphUrl`, Okta's `orgUrl`. */
export function identityUrls(origin: string): { loginUrl: string; graphUrl: string; orgUrl: string } {
  const base = origin.replace(/\/+$/, '');
  return {
    loginUrl: `${base}${IDENTITY_PATHS.loginUrl}`,
    graphUrl: `${base}${IDENTITY_PATHS.graphUrl}`,
    orgUrl: `${base}${IDENTITY_PATHS.orgUrl}`,
  };
}

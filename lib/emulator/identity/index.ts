/**
 * The identity providers' stand-in: one Microsoft Entra ID directory (its token endpoint and
 * Graph's user routes) and one Okta org (its Management API), written once and served both by the
 * upstream emulator (`npm start`'s demo, at the emulator's own origin) and by tests
 * (test/helpers/identity-providers.ts, on a port of its own). It behaves as docs/identity.md says
 * the real services do, so a client that works against it has been held to what they check: the
 * token, the `$select`, the auth header.
 *
 * Served at an origin, a config names it with {@link identityUrls}: `loginUrl` `<origin>/entra/login`,
 * `graphUrl` `<origin>/entra/graph`, `orgUrl` `<origin>/okta`. The knobs are the object's (`entra`,
 * `okta`, `control`) and, in a running emulator, `/_emulator/identity` (admin.ts).
 *
 * @example
 * const idp = new IdentityStandIn({ entra: { users: [{ userPrincipalName: 'kim@acme.test' }] } });
 * idp.entra.roles = ['User.Read.All', 'User.RevokeSessions.All'];
 * idp.control.addFault({ provider: 'okta', status: 503, times: 2 });
 * const answer = await idp.app.request('/okta/api/v1/users/kim%40acme.test', { headers: { authorization: `SSWS ${idp.okta.token}` } });
 */
import { Hono } from 'hono';
import { IdentityControl, type IdentityProvider } from './control.ts';
import { type EntraOptions, EntraStandIn } from './entra.ts';
import { graphRoutes } from './graph.ts';
import { loginRoutes } from './login.ts';
import { type OktaOptions, OktaStandIn } from './okta.ts';
import { oktaRoutes } from './okta-routes.ts';

export type * from './control.ts';
export { ALL_ENTRA_ROLES, type EntraUser, type EntraUserInput, GRAPH_PERMISSIONS } from './entra.ts';
export { GRAPH_SCOPE } from './login.ts';
export {
  OKTA_STATUSES,
  type OktaProviderType,
  type OktaStatus,
  type OktaUser,
  type OktaUserInput,
} from './okta.ts';
export { IDENTITY_PATHS, identityUrls } from './paths.ts';
export { EntraStandIn, IdentityControl, OktaStandIn };

export interface IdentityStandInOptions {
  /** Clock for token expiry, rate windows and action times; default Date.now. */
  now?: () => number;
  entra?: EntraOptions;
  okta?: OktaOptions;
}

export class IdentityStandIn {
  readonly control: IdentityControl;
  readonly entra: EntraStandIn;
  readonly okta: OktaStandIn;
  /** The providers' routes: `/entra/login/…`, `/entra/graph/…`, `/okta/…`. */
  readonly app: Hono;

  constructor(options: IdentityStandInOptions = {}) {
    const now = options.now ?? Date.now;
    this.control = new IdentityControl(now);
    this.entra = new EntraStandIn(options.entra, now);
    this.okta = new OktaStandIn(options.okta, now);
    this.app = new Hono();
    this.app.route('/entra', loginRoutes(this.entra, this.control));
    this.app.route('/entra', graphRoutes(this.entra, this.control));
    this.app.route('/okta', oktaRoutes(this.okta, this.control));
  }

  /**
   * The next `times` requests to a provider are 429s: Graph's with `Retry-After` when given (it
   * sometimes has none), Okta's as Okta sends them (never one; its rate headers say when).
   */
  throttle(provider: IdentityProvider, times = 1, retryAfterSeconds?: number): void {
    this.control.addFault({
      provider,
      status: 429,
      times,
      ...(provider === 'entra' && retryAfterSeconds !== undefined ? { retryAfter: retryAfterSeconds } : {}),
    });
  }

  /** What the knobs are set to and who is in the directory, as `/_emulator/identity` shows it. */
  state() {
    return {
      latencyMs: this.control.latencyMs,
      faults: this.control.pendingFaults(),
      entra: {
        tenantId: this.entra.tenantId,
        tenantDomains: this.entra.tenantDomains,
        clientId: this.entra.clientId,
        roles: this.entra.roles,
        identityProtection: this.entra.identityProtection,
        tokenTtlSeconds: this.entra.tokenTtlSeconds,
        users: [...this.entra.users.values()],
      },
      okta: {
        userRisk: this.okta.userRisk,
        rate: this.okta.rateHeaders(),
        users: [...this.okta.users.values()],
      },
    };
  }
}

/**
 * The identity providers' stand-in (lib/emulator/identity, the same code `npm start`'s emulator
 * serves) on a port of its own, for a test file: a real HTTP server on 127.0.0.1 built on
 * stand-in.ts, closed after the file. It gives the URLs and secrets a config needs, the knobs, and
 * the log of every request received (headers and bodies whole), so a test can prove what reached a
 * provider and what never did.
 *
 * @example
 * const idp = await identityProviders({ entra: { users: [{ userPrincipalName: 'kim@acme.test' }] } });
 * const config = { identity: { providers: idp.providers({ entra: ['acme.test'], okta: ['example.com'] }) } };
 * const secrets = idp.secrets; // { idpEntraSecret, idpOktaToken }
 * idp.stand.okta.setRateLimit({ remaining: 0 });
 * expect(idp.requests.every((r) => !r.body.includes(password))).toBe(true);
 */
import {
  type IdentityAction,
  type IdentityRequest,
  IdentityStandIn,
  type IdentityStandInOptions,
} from '../../lib/emulator/identity/index.ts';
import { identityUrls } from '../../lib/emulator/index.ts';
import { standIn } from './stand-in.ts';

/**
 * The rate `providers()` gives each provider's lane: a stand-in on this machine, not a directory
 * with a real limit, so tests are not held at the default 5 a second (a test of the lanes sets its
 * own).
 */
export const STAND_IN_RATE = 100;

/** The secret object's names the helper's `providers()` refers to. */
export const STAND_IN_SECRET_NAMES = { entra: 'idpEntraSecret', okta: 'idpOktaToken' } as const;

export interface IdentityProviders {
  /** `http://127.0.0.1:<port>`. */
  url: string;
  /** The stand-in itself: every knob (`entra`, `okta`, `control`, `throttle`). */
  stand: IdentityStandIn;
  entra: { tenantId: string; clientId: string; clientSecret: string; loginUrl: string; graphUrl: string };
  okta: { orgUrl: string; token: string };
  /** The secret object entries `providers()` names. */
  secrets: Record<string, string>;
  /** A config's `identity.providers`: `corp` (entra) and `shop` (okta), for the domains given. */
  providers(domains: { entra?: string[]; okta?: string[] }): Record<string, unknown>;
  /** Every request received so far, in order. */
  readonly requests: IdentityRequest[];
  /** What was done to accounts, in order. */
  readonly actions: IdentityAction[];
  close(): Promise<void>;
}

export async function identityProviders(options: IdentityStandInOptions = {}): Promise<IdentityProviders> {
  const stand = new IdentityStandIn(options);
  const server = await standIn(async (req, body, res) => {
    // A client that gives up (a timeout) closes its socket: a hanging answer is released then.
    const gone = new AbortController();
    res.on('close', () => gone.abort());
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      for (const one of Array.isArray(value) ? value : value === undefined ? [] : [value])
        headers.append(name, one);
    }
    const method = req.method ?? 'GET';
    const response = await stand.app.fetch(
      new Request(`http://${req.headers.host ?? '127.0.0.1'}${req.url ?? '/'}`, {
        method,
        headers,
        body: method === 'GET' || method === 'HEAD' ? undefined : body,
        signal: gone.signal,
      }),
    );
    if (res.destroyed) return;
    res.writeHead(response.status, Object.fromEntries(response.headers));
    res.end(Buffer.from(await response.arrayBuffer()));
  });
  const urls = identityUrls(server.url);
  const secrets = {
    [STAND_IN_SECRET_NAMES.entra]: stand.entra.clientSecret,
    [STAND_IN_SECRET_NAMES.okta]: stand.okta.token,
  };
  return {
    url: server.url,
    stand,
    entra: {
      tenantId: stand.entra.tenantId,
      clientId: stand.entra.clientId,
      clientSecret: stand.entra.clientSecret,
      loginUrl: urls.loginUrl,
      graphUrl: urls.graphUrl,
    },
    okta: { orgUrl: urls.orgUrl, token: stand.okta.token },
    secrets,
    providers(domains) {
      return {
        ...(domains.entra
          ? {
              corp: {
                type: 'entra',
                tenantId: stand.entra.tenantId,
                clientId: stand.entra.clientId,
                clientSecret: { secret: STAND_IN_SECRET_NAMES.entra },
                domains: domains.entra,
                loginUrl: urls.loginUrl,
                graphUrl: urls.graphUrl,
                requestsPerSecond: STAND_IN_RATE,
              },
            }
          : {}),
        ...(domains.okta
          ? {
              shop: {
                type: 'okta',
                orgUrl: urls.orgUrl,
                token: { secret: STAND_IN_SECRET_NAMES.okta },
                domains: domains.okta,
                userRisk: stand.okta.userRisk,
                requestsPerSecond: STAND_IN_RATE,
              },
            }
          : {}),
      };
    },
    get requests() {
      return stand.control.requests;
    },
    get actions() {
      return stand.control.actions;
    },
    close: async () => {
      stand.control.releaseHangs();
      await server.close();
    },
  };
}

/**
 * Microsoft's token endpoint for one EntraStandIn: the client-credentials grant
 * (`POST <loginUrl>/<tenant>/oauth2/v2.0/token`, form-encoded) and its refusals as docs/identity.md
 * gives them (`{error, error_description: "AADSTS…", error_codes}`): an unknown tenant or app, a
 * wrong secret (401 `invalid_client`), a scope other than Graph's `.default`. Mounted at `/entra`:
 * a config's `loginUrl` is `<origin>/entra/login`.
 */
import { randomUUID } from 'node:crypto';
import { Hono } from 'hono';
import { type IdentityControl, ProviderError, type ProviderFace } from './control.ts';
import type { EntraStandIn } from './entra.ts';

export const GRAPH_SCOPE = 'https://graph.microsoft.com/.default';

/** Errors of the token endpoint: `{error, error_description: "AADSTS…", error_codes}`. */
const loginFace: ProviderFace = {
  provider: 'entra',
  errorAnswer(c, error) {
    const [code, aadsts] =
      error.code?.split(':') ??
      (error.status >= 500 ? ['temporarily_unavailable', '50001'] : ['invalid_request', '900144']);
    const body = {
      error: code,
      error_description: `AADSTS${aadsts}: ${error.message} Trace ID: ${randomUUID()} Correlation ID: ${randomUUID()} Timestamp: ${new Date().toISOString()}`,
      error_codes: [Number(aadsts)],
      timestamp: new Date().toISOString(),
      trace_id: randomUUID(),
      correlation_id: randomUUID(),
      error_uri: `https://login.microsoftonline.com/error?code=${aadsts}`,
    };
    return c.json(body, error.status as 400, error.headers);
  },
};

export function loginRoutes(entra: EntraStandIn, control: IdentityControl): Hono {
  const app = new Hono();

  app.post(
    '/login/:tenant/oauth2/v2.0/token',
    control.endpoint(loginFace, 'entraToken', (c, body) => {
      const tenant = c.req.param('tenant') ?? '';
      if (!entra.isTenant(tenant))
        throw new ProviderError(
          400,
          'invalid_request:90002',
          `Tenant '${tenant}' not found. Check to make sure you have the correct tenant ID and are signing into the correct cloud.`,
        );
      const form = new URLSearchParams(body);
      const grant = form.get('grant_type');
      if (grant !== 'client_credentials')
        throw new ProviderError(
          400,
          'unsupported_grant_type:70003',
          `The app requested an unsupported grant type '${grant ?? ''}'.`,
        );
      const clientId = form.get('client_id');
      if (!clientId)
        throw new ProviderError(
          400,
          'invalid_request:900144',
          "The request body must contain the following parameter: 'client_id'.",
        );
      if (clientId !== entra.clientId)
        throw new ProviderError(
          400,
          'unauthorized_client:700016',
          `Application with identifier '${clientId}' was not found in the directory '${entra.tenantId}'.`,
        );
      const secret = form.get('client_secret');
      if (!secret)
        throw new ProviderError(
          401,
          'invalid_client:7000218',
          "The request body must contain the following parameter: 'client_assertion' or 'client_secret'.",
        );
      if (secret !== entra.clientSecret)
        throw new ProviderError(
          401,
          'invalid_client:7000215',
          `Invalid client secret provided. Ensure the secret being sent in the request is the client secret value, not the client secret ID, for a secret added to app '${clientId}'.`,
        );
      const scope = form.get('scope');
      if (scope === null)
        throw new ProviderError(
          400,
          'invalid_request:900144',
          "The request body must contain the following parameter: 'scope'.",
        );
      if (scope !== GRAPH_SCOPE)
        throw new ProviderError(
          400,
          'invalid_scope:70011',
          `The provided request must include a 'scope' input parameter. The provided value for the input parameter 'scope' is not valid. The scope ${scope} is not valid.`,
        );
      const { token, expiresIn } = entra.issueToken();
      return c.json({
        token_type: 'Bearer',
        expires_in: expiresIn,
        ext_expires_in: expiresIn,
        access_token: token,
      });
    }),
  );

  app.all(
    '/login/*',
    control.endpoint(loginFace, 'unknown', (c) => {
      throw new ProviderError(
        404,
        'invalid_request:900561',
        `The endpoint ${c.req.path} is not one the stand-in serves.`,
      );
    }),
  );
  return app;
}

/**
 * A Microsoft Sentinel stand-in for tests: Entra's token endpoint (client credentials for one app,
 * a token that lasts `tokenSeconds`) and the Logs Ingestion API (the bearer it issued, a JSON
 * array of records, at most 1 MB, 204), both on one local HTTP server, as `loginUrl` and
 * `endpoint`. It keeps every record and every token request; answers can be scripted.
 */
import { standIn } from './stand-in.ts';

export const SENTINEL_APP = {
  tenantId: 'tenant-0001',
  clientId: 'client-0001',
  clientSecret: 'client-secret-for-tests',
};

export interface SentinelStandIn {
  url: string;
  records: Record<string, unknown>[];
  tokenRequests: number;
  uploads: { bytes: number; status: number }[];
  tokenSeconds: number;
  script(...answers: { status: number; body?: unknown; retryAfter?: number }[]): void;
  close(): Promise<void>;
}

export async function startSentinel(): Promise<SentinelStandIn> {
  const queue: { status: number; body?: unknown; retryAfter?: number }[] = [];
  const issued = new Map<string, number>();
  let n = 0;
  const stand: SentinelStandIn = {
    url: '',
    records: [],
    tokenRequests: 0,
    uploads: [],
    tokenSeconds: 3_600,
    script: (...answers) => queue.push(...answers),
    close: () => server.close(),
  };
  const server = await standIn((req, _body, res, raw) => {
    const url = new URL(req.url ?? '/', 'http://sentinel.test');
    const json = (status: number, body?: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
      res.end(body === undefined ? '' : JSON.stringify(body));
    };
    if (req.method === 'POST' && url.pathname === `/${SENTINEL_APP.tenantId}/oauth2/v2.0/token`) {
      stand.tokenRequests += 1;
      const form = new URLSearchParams(raw.toString('utf8'));
      if (
        !form.get('client_id')?.startsWith('client-') ||
        form.get('client_secret') !== SENTINEL_APP.clientSecret
      )
        return json(401, {
          error: 'invalid_client',
          error_description: `AADSTS7000215: Invalid client secret provided for ${form.get('client_secret')}`,
        });
      if (
        form.get('grant_type') !== 'client_credentials' ||
        form.get('scope') !== 'https://monitor.azure.com//.default'
      )
        return json(400, { error: 'invalid_request' });
      const token = `token-${++n}`;
      issued.set(token, Date.now() + stand.tokenSeconds * 1000);
      return json(200, { token_type: 'Bearer', expires_in: stand.tokenSeconds, access_token: token });
    }
    if (req.method === 'POST' && /^\/dataCollectionRules\/[^/]+\/streams\/[^/]+$/.test(url.pathname)) {
      const upload = (status: number, body?: unknown, headers?: Record<string, string>) => {
        stand.uploads.push({ bytes: raw.length, status });
        json(status, body, headers);
      };
      const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
      const until = bearer ? issued.get(bearer) : undefined;
      if (!until || until < Date.now()) return upload(401, { error: { code: 'InvalidToken' } });
      const scripted = queue.shift();
      if (scripted)
        return upload(
          scripted.status,
          scripted.body ?? {},
          scripted.retryAfter !== undefined ? { 'Retry-After': String(scripted.retryAfter) } : {},
        );
      if (raw.length > 1_000_000) return upload(413, { error: { code: 'ContentLengthLimitExceeded' } });
      let body: unknown;
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch {
        return upload(400, { error: { code: 'InvalidJson' } });
      }
      if (!Array.isArray(body))
        return upload(400, { error: { code: 'InvalidPayload', message: 'expected an array' } });
      stand.records.push(...(body as Record<string, unknown>[]));
      return upload(204);
    }
    json(404, { error: { code: 'NotFound' } });
  });
  stand.url = server.url;
  return stand;
}

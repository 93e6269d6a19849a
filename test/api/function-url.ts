/**
 * Function URL events (payload format 2.0) as Lambda delivers them, for tests of the Lambda door:
 * the path as sent (percent-encoding kept, as Function URLs keep it), the headers lower-cased,
 * and the body as text or base64.
 */
import { randomUUID } from 'node:crypto';
import type { LambdaFunctionURLEvent } from 'aws-lambda';

export const DOMAIN = 'abcdefghij.lambda-url.eu-west-1.on.aws';

export interface EventOptions {
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  /** Send the body base64-encoded, as a Function URL does for a body it does not take for text. */
  base64?: boolean;
  query?: string;
}

export function functionUrlEvent(
  method: string,
  rawPath: string,
  options: EventOptions = {},
): LambdaFunctionURLEvent {
  const now = new Date();
  const headers: Record<string, string> = {
    host: DOMAIN,
    'x-forwarded-proto': 'https',
    'x-forwarded-for': '203.0.113.7',
    'user-agent': 'curl/8.5.0',
    accept: '*/*',
  };
  for (const [k, v] of Object.entries(options.headers ?? {})) headers[k.toLowerCase()] = v;
  const bytes = options.body === undefined ? undefined : Buffer.from(options.body);
  const body =
    bytes === undefined ? undefined : options.base64 ? bytes.toString('base64') : bytes.toString('utf8');
  if (bytes !== undefined) headers['content-length'] = String(bytes.byteLength);
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath,
    rawQueryString: options.query ?? '',
    headers,
    requestContext: {
      accountId: 'anonymous',
      apiId: 'abcdefghij',
      domainName: DOMAIN,
      domainPrefix: 'abcdefghij',
      http: { method, path: rawPath, protocol: 'HTTP/1.1', sourceIp: '203.0.113.7', userAgent: 'curl/8.5.0' },
      requestId: randomUUID(),
      routeKey: '$default',
      stage: '$default',
      time: now.toUTCString(),
      timeEpoch: now.getTime(),
    },
    ...(body === undefined ? {} : { body }),
    isBase64Encoded: options.base64 ?? false,
  };
}

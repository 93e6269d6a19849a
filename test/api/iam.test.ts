/**
 * API_AUTH=AWS_IAM: behind a Function URL with IAM auth, AWS checks the SigV4 signature and the
 * caller's IAM identity becomes the client; no bearer token is read (SigV4 owns Authorization).
 */
import { describe, expect, it } from 'vitest';
import { createLambdaHandler } from '../../lib/api/lambda.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { acmeAssetIds, buildApi } from './harness.ts';

const emu = useEmulator();
const ROLE = 'arn:aws:sts::123456789012:assumed-role/runbook/session';

function functionUrlEvent(path: string, body: string, iam: boolean) {
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: path,
    rawQueryString: '',
    headers: {
      host: 'x.lambda-url.eu-west-1.on.aws',
      'content-type': 'application/json',
      authorization: 'AWS4-HMAC-SHA256 Credential=AKIA.../eu-west-1/lambda/aws4_request, Signature=abc',
    },
    requestContext: {
      accountId: '123456789012',
      apiId: 'x',
      domainName: 'x.lambda-url.eu-west-1.on.aws',
      domainPrefix: 'x',
      http: { method: 'POST', path, protocol: 'HTTP/1.1', sourceIp: '203.0.113.7', userAgent: 'aws-cli' },
      requestId: 'r1',
      routeKey: '$default',
      stage: '$default',
      time: new Date().toUTCString(),
      timeEpoch: Date.now(),
      ...(iam
        ? {
            authorizer: {
              iam: {
                accessKey: 'AKIA',
                accountId: '123456789012',
                callerId: 'AROA',
                userArn: ROLE,
                userId: 'AROA:session',
              },
            },
          }
        : {}),
    },
    body,
    isBase64Encoded: false,
  } as never;
}

describe('IAM-authenticated Function URL', () => {
  it('takes the IAM caller as the client, toggles, and audits it under that name', async () => {
    const api = buildApi(emu, { iamCallers: true });
    const handler = createLambdaHandler(api.app);
    const id = acmeAssetIds(emu)[1] as number;
    const res = await handler(functionUrlEvent(`/assets/${id}/toggle`, '{"is_disabled":true}', true));
    expect(res.statusCode).toBe(200);
    const audit = await api.audit.list(id);
    expect(audit[0]?.client).toBe(`iam:${ROLE}`);
    expect(api.loads()).toBe(0); // no bearer tokens, so apiClients is never read
    await handler(functionUrlEvent(`/assets/${id}/toggle`, '{"is_disabled":false}', true));
  });

  it('refuses a request that did not come through IAM auth, before the upstream', async () => {
    const api = buildApi(emu, { iamCallers: true });
    const handler = createLambdaHandler(api.app);
    emu.running.emulator.control.clearLog();
    const id = acmeAssetIds(emu)[1] as number;
    const res = await handler(functionUrlEvent(`/assets/${id}/toggle`, '{"is_disabled":true}', false));
    expect(res.statusCode).toBe(401);
    expect(JSON.parse(res.body ?? '{}').error.code).toBe('unauthorized');
    expect(emu.running.emulator.control.calls('assetToggle')).toHaveLength(0);
  });
});

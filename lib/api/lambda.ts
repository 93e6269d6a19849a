/**
 * The API app as a Lambda handler for Function URL events (payload v2), through hono/aws-lambda,
 * with the two places the adapter would answer outside the app made to keep the API's promise
 * that every answer is JSON: a GET or HEAD event that carries a body (a Request cannot have one;
 * the body is dropped, as a server would ignore it), and an event the adapter cannot turn into a
 * Request at all.
 */
import type { APIGatewayProxyStructuredResultV2, Context, LambdaFunctionURLEvent } from 'aws-lambda';
import type { Env, Hono, Schema } from 'hono';
import { handle, type LambdaContext, type LambdaEvent } from 'hono/aws-lambda';
import type { ErrorBody } from './errors.ts';

export type FunctionUrlHandler = (
  event: LambdaFunctionURLEvent,
  context?: Context,
) => Promise<APIGatewayProxyStructuredResultV2>;

function isJson(headers: Record<string, unknown> | undefined): boolean {
  const type = Object.entries(headers ?? {}).find(([k]) => k.toLowerCase() === 'content-type')?.[1];
  return String(type ?? '').includes('application/json');
}

export function createLambdaHandler<E extends Env, S extends Schema, B extends string>(
  app: Hono<E, S, B>,
): FunctionUrlHandler {
  const inner = handle(app);
  return async (event, context) => {
    const method = event.requestContext?.http?.method?.toUpperCase();
    const adapted =
      (method === 'GET' || method === 'HEAD') && event.body ? { ...event, body: undefined } : event;
    // The adapter's own event types are narrower than AWS's (e.g. `authentication: null`); the shape is the same.
    const result = await inner(adapted as unknown as LambdaEvent, context as unknown as LambdaContext);
    const headers = (result.headers ?? {}) as Record<string, string>;
    if (isJson(headers) || method === 'HEAD') {
      return {
        statusCode: result.statusCode,
        headers,
        body: result.body,
        isBase64Encoded: result.isBase64Encoded,
        ...(result.cookies?.length ? { cookies: result.cookies } : {}),
      };
    }
    const invalid = result.statusCode === 400;
    const body: ErrorBody = {
      error: invalid
        ? { code: 'invalid_request', message: 'the request is malformed' }
        : { code: 'internal_error', message: 'the request could not be handled' },
    };
    return {
      statusCode: result.statusCode >= 400 ? result.statusCode : 500,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      isBase64Encoded: false,
    };
  };
}

/**
 * The API app as a Lambda handler for Function URL (payload v2) events, through hono/aws-lambda,
 * with the two places the adapter would answer outside the app made to keep the API's promise
 * that every answer is JSON: a GET or HEAD event that carries a body (a Request cannot; the body
 * is dropped, as a server would ignore it), and an event the adapter cannot turn into a Request.
 */
import type { Env, Hono, Schema } from 'hono';
import { type APIGatewayProxyResult, handle, type LambdaContext, type LambdaEvent } from 'hono/aws-lambda';
import type { ErrorBody } from './errors.ts';

function methodOf(event: LambdaEvent): string | undefined {
  const http = (event.requestContext as { http?: { method?: unknown } } | undefined)?.http;
  if (typeof http?.method === 'string') return http.method.toUpperCase();
  const v1 = (event as { httpMethod?: unknown }).httpMethod;
  return typeof v1 === 'string' ? v1.toUpperCase() : undefined;
}

function isJson(result: APIGatewayProxyResult): boolean {
  const headers: Record<string, unknown> = result.headers ?? result.multiValueHeaders ?? {};
  const type = Object.entries(headers).find(([k]) => k.toLowerCase() === 'content-type')?.[1];
  return String(Array.isArray(type) ? type[0] : (type ?? '')).includes('application/json');
}

export function createLambdaHandler<E extends Env, S extends Schema, B extends string>(app: Hono<E, S, B>) {
  const inner = handle(app);
  return async (event: LambdaEvent, context?: LambdaContext): Promise<APIGatewayProxyResult> => {
    const method = methodOf(event);
    const adapted = (method === 'GET' || method === 'HEAD') && event.body ? { ...event, body: null } : event;
    const result: APIGatewayProxyResult = await inner(adapted, context);
    if (isJson(result) || (method === 'HEAD' && result.body === '')) return result;
    const code = result.statusCode === 400 ? 'invalid_request' : 'internal_error';
    const body: ErrorBody = {
      error: {
        code,
        message: code === 'invalid_request' ? 'the request is malformed' : 'the request could not be handled',
      },
    };
    return {
      statusCode: result.statusCode >= 400 ? result.statusCode : 500,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      isBase64Encoded: false,
    };
  };
}

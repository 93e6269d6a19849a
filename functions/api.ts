/**
 * Lambda entry of the HTTP API (docs/api.md), for a Function URL (payload v2).
 * Everything is built once, at cold start; a configuration problem fails the cold start with a
 * message naming it, instead of failing every request. Each invocation flushes the API's metrics
 * (SlackRequestsRejected) and puts its request id on its log lines (lib/invocation.ts).
 */
import { createApiApp } from '../lib/api/app.ts';
import { createApiDeps } from '../lib/api/deps.ts';
import { createLambdaHandler } from '../lib/api/lambda.ts';
import { readEnvironment } from '../lib/env.ts';
import { withInvocation } from '../lib/invocation.ts';
import { createLogger, startFailure } from '../lib/log.ts';
import { loadSecrets } from '../lib/secrets.ts';

async function coldStart() {
  try {
    const env = readEnvironment();
    const logger = createLogger({ level: env.logLevel, name: 'api' });
    return await createApiDeps(env, await loadSecrets(env), { logger });
  } catch (error) {
    throw startFailure(createLogger({ name: 'api' }), 'the API', error);
  }
}

const deps = await coldStart();
export const app = createApiApp(deps);
export const handler = withInvocation(createLambdaHandler(app), deps.metrics ? [deps.metrics] : []);

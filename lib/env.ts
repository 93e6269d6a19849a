/**
 * The environment variables (docs/cli.md#beside-npm-start), read once and checked: a bad value fails at start
 * with the variable's name, not mid-run.
 */
import { ConfigError } from './errors.ts';
import { isLogLevel, type LogLevel } from './log.ts';

export interface Environment {
  apiUrl: string;
  /** True when EXPOSURE_API_URL was set explicitly (`npm start` runs the emulator otherwise). */
  apiUrlSet: boolean;
  coreSegment: string;
  apiToken?: string;
  apiKey?: string;
  tenantId?: number;
  appUrl: string;
  alertsConfig?: string;
  secretId?: string;
  secretsFile?: string;
  /** The identity providers' own secret, which only the workers read (lib/identity/secrets.ts). */
  identitySecretId?: string;
  tableName: string;
  dynamodbEndpoint?: string;
  port: number;
  logLevel: LogLevel;
  /** How the HTTP API authenticates callers: bearer tokens (default), or IAM behind a Function URL. */
  apiAuth: 'bearer' | 'aws_iam';
  /**
   * The alert config's `actions.slack`, as JSON, for the API (which has no config of its own): the
   * stack sets it from the config it deploys (SLACK_ACTIONS).
   */
  slackActions?: string;
  /** Where the API hands a Slack request's work to a worker (the events stream queue, on AWS). */
  workQueueUrl?: string;
  /**
   * The emulator `npm start` runs, when it runs one: set by `start`, never read from the
   * environment. The built-in demo config then names the identity providers it stands in for.
   */
  localEmulatorUrl?: string;
}

type Env = Record<string, string | undefined>;

function nonEmpty(env: Env, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

function httpUrl(name: string, value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(`${name} must be an http(s) URL, got ${JSON.stringify(value)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(`${name} must be an http(s) URL, got ${JSON.stringify(value)}`);
  }
  return value.replace(/\/+$/, '');
}

function integer(name: string, value: string, min: number, max: number): number {
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(value)}`);
  }
  return Number(value);
}

export function readEnvironment(env: Env = process.env): Environment {
  const apiUrl = nonEmpty(env, 'EXPOSURE_API_URL');
  const coreSegment = nonEmpty(env, 'EXPOSURE_API_CORE_SEGMENT') ?? 'firework';
  // `.` and `..` are dot segments: the URL parser would resolve them to another path.
  if (!/^[A-Za-z0-9._~-]+$/.test(coreSegment) || /^\.\.?$/.test(coreSegment)) {
    throw new ConfigError(
      `EXPOSURE_API_CORE_SEGMENT must be one path segment, got ${JSON.stringify(coreSegment)}`,
    );
  }
  const tenant = nonEmpty(env, 'EXPOSURE_TENANT_ID');
  const port = nonEmpty(env, 'PORT');
  const level = nonEmpty(env, 'LOG_LEVEL')?.toLowerCase() ?? 'info';
  if (!isLogLevel(level))
    throw new ConfigError(`LOG_LEVEL must be debug, info, warn or error, got ${JSON.stringify(level)}`);
  const dynamodbEndpoint = nonEmpty(env, 'DYNAMODB_ENDPOINT');
  const apiAuth = (nonEmpty(env, 'API_AUTH') ?? 'bearer').toLowerCase();
  if (apiAuth !== 'bearer' && apiAuth !== 'aws_iam') {
    throw new ConfigError(`API_AUTH must be bearer or AWS_IAM, got ${JSON.stringify(apiAuth)}`);
  }
  return {
    apiUrl: apiUrl ? httpUrl('EXPOSURE_API_URL', apiUrl) : 'https://api.flare.io',
    apiUrlSet: apiUrl !== undefined,
    coreSegment,
    apiToken: nonEmpty(env, 'EXPOSURE_API_TOKEN'),
    apiKey: nonEmpty(env, 'EXPOSURE_API_KEY'),
    tenantId:
      tenant === undefined ? undefined : integer('EXPOSURE_TENANT_ID', tenant, 1, Number.MAX_SAFE_INTEGER),
    appUrl: httpUrl('EXPOSURE_APP_URL', nonEmpty(env, 'EXPOSURE_APP_URL') ?? 'https://app.flare.io'),
    alertsConfig: nonEmpty(env, 'ALERTS_CONFIG'),
    secretId: nonEmpty(env, 'SECRET_ID'),
    secretsFile: nonEmpty(env, 'SECRETS_FILE'),
    identitySecretId: nonEmpty(env, 'IDENTITY_SECRET_ID'),
    tableName: nonEmpty(env, 'TABLE_NAME') ?? 'exposure-alerts',
    dynamodbEndpoint: dynamodbEndpoint ? httpUrl('DYNAMODB_ENDPOINT', dynamodbEndpoint) : undefined,
    port: port === undefined ? 8787 : integer('PORT', port, 0, 65535),
    logLevel: level,
    apiAuth,
    slackActions: nonEmpty(env, 'SLACK_ACTIONS'),
    workQueueUrl: nonEmpty(env, 'WORK_QUEUE_URL'),
  };
}

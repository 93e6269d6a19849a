/**
 * The deployment's settings, read from CDK context (`cdk.json`, or `-c key=value` on the command
 * line) and checked once, before any construct is built: a bad value fails synth with a
 * SettingsError naming the key, instead of a CloudFormation error halfway through a deploy.
 *
 * `-c` values arrive as strings and `cdk.json` values as JSON, so numbers are accepted as both.
 * An empty string means "not set", so `cdk.json` can list every key.
 */
import type { Node } from 'constructs';

export type ApiAuth = 'NONE' | 'AWS_IAM';

/**
 * A context value synth cannot use. The message names the key, the value and what is allowed;
 * `key` names the key again for a caller that must not parse the message to learn it.
 *
 * @example
 * new SettingsError('apiAuth', 'context apiAuth must be NONE or AWS_IAM, got "IAM"').key // 'apiAuth'
 */
export class SettingsError extends Error {
  override readonly name = 'SettingsError';
  readonly code = 'settings';
  /** The CDK context key whose value was refused. */
  readonly key: string;
  constructor(key: string, message: string) {
    super(message);
    this.key = key;
  }
}

export interface Settings {
  /** Scheduler rate of the events poller, in seconds. */
  eventsIntervalSeconds: number;
  /** Scheduler rate of the credentials poller, in seconds. */
  credentialsIntervalSeconds: number;
  /** Path of the alert config, relative to the project root unless absolute. */
  alertsConfig: string;
  alarmEmail?: string;
  apiAuth: ApiAuth;
  /** Name or complete ARN of an existing secret; a new (empty) secret is created when unset. */
  existingSecret?: string;
  /**
   * Name or complete ARN of an existing secret for the identity providers' credentials, which only
   * the workers read; unset, one is created (empty) when the alert config has identity providers.
   */
  existingIdentitySecret?: string;
  logRetentionDays: number;
  eventsLagAlarmSeconds: number;
  credentialsLagAlarmSeconds: number;
  /**
   * The global-search quota alarm's threshold when set; unset (the default), the alert config's
   * `upstream.quotaReserve`, the level at which credential polling pauses.
   */
  quotaAlarmThreshold?: number;
  /** The most worker invocations of each kind at once: the SQS event source's maximum concurrency. */
  pollerConcurrency: number;
  /** Reserved concurrency of each worker, at least `pollerConcurrency`; undefined reserves none. */
  pollerReservedConcurrency?: number;
  /** Passed to the functions as EXPOSURE_API_URL etc. when set. */
  upstream: {
    apiUrl?: string;
    coreSegment?: string;
    tenantId?: string;
    appUrl?: string;
  };
  logLevel: 'debug' | 'info' | 'warn' | 'error';
  /** Stack traces in TypeScript positions (`NODE_OPTIONS=--enable-source-maps`), at some cold-start cost. */
  sourceMapTraces: boolean;
}

/** The defaults; `cdk.json` holds the same values (a test keeps the two equal). */
export const CONTEXT_DEFAULTS = {
  eventsRate: 'rate(1 minute)',
  credentialsRate: 'rate(1 hour)',
  alertsConfig: 'alerts.config.json',
  alarmEmail: '',
  apiAuth: 'NONE',
  existingSecretName: '',
  existingIdentitySecretName: '',
  logRetentionDays: 30,
  eventsLagAlarmSeconds: 900,
  credentialsLagAlarmSeconds: 7200,
  quotaAlarmThreshold: '',
  pollerConcurrency: 2,
  pollerReservedConcurrency: 'none',
  apiUrl: '',
  apiCoreSegment: '',
  tenantId: '',
  appUrl: '',
  logLevel: 'info',
  sourceMapTraces: 'off',
} as const;

export type ContextKey = keyof typeof CONTEXT_DEFAULTS;

/** CloudWatch Logs accepts only these retention periods (never-expire is left out on purpose). */
export const RETENTION_DAYS = [
  1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653,
] as const;

const UNITS: Record<string, number> = { minute: 60, hour: 3600, day: 86_400 };

/**
 * Seconds between two runs of a `rate(...)` expression. Only rates are accepted: the poller
 * timeouts and maximum event ages are derived from the interval, which a cron has not got.
 */
export function parseRate(key: string, value: string): number {
  const match = /^rate\((\d+) (minute|hour|day)s?\)$/.exec(value.trim());
  const unit = match ? UNITS[match[2] as string] : undefined;
  const count = match ? Number(match[1]) : 0;
  if (!match || unit === undefined || count < 1) {
    throw new SettingsError(
      key,
      `context ${key} must be an EventBridge Scheduler rate such as "rate(1 minute)", "rate(5 minutes)" or "rate(1 hour)", got ${JSON.stringify(value)}`,
    );
  }
  return count * unit;
}

function text(node: Node, key: ContextKey): string | undefined {
  const raw: unknown = node.tryGetContext(key) ?? CONTEXT_DEFAULTS[key];
  if (raw === null || raw === undefined) return undefined;
  if (typeof raw !== 'string' && typeof raw !== 'number') {
    throw new SettingsError(key, `context ${key} must be a string, got ${JSON.stringify(raw)}`);
  }
  const value = String(raw).trim();
  return value === '' ? undefined : value;
}

function integer(node: Node, key: ContextKey, min: number, max: number): number {
  const value = text(node, key);
  if (value === undefined || !/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
    throw new SettingsError(
      key,
      `context ${key} must be an integer from ${min} to ${max}, got ${JSON.stringify(value ?? '')}`,
    );
  }
  return Number(value);
}

function httpUrl(key: ContextKey, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (!/^https?:\/\/[^\s/]+/i.test(value) || !URL.canParse(value)) {
    throw new SettingsError(key, `context ${key} must be an http(s) URL, got ${JSON.stringify(value)}`);
  }
  return value;
}

/**
 * Context keys that are the CDK's own, not settings of this stack: feature flags and toolkit keys
 * (`@aws-cdk/...`, `aws:cdk:...`, lookups like `availability-zones:account=...`) hold `:` or `@`;
 * these few do not.
 */
const CDK_KEYS: ReadonlySet<string> = new Set(['cli-telemetry', 'acknowledged-issue-numbers']);

/** Edit distance between two names (insertions, deletions, substitutions, swaps of neighbours). */
function distance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => [
    i,
    ...Array<number>(b.length).fill(0),
  ]) as number[][];
  for (let j = 1; j <= b.length; j++) (d[0] as number[])[j] = j;
  for (let i = 1; i <= a.length; i++) {
    const row = d[i] as number[];
    const up = d[i - 1] as number[];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      row[j] = Math.min((up[j] as number) + 1, (row[j - 1] as number) + 1, (up[j - 1] as number) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        row[j] = Math.min(row[j] as number, ((d[i - 2] as number[])[j - 2] as number) + 1);
    }
  }
  return (d[a.length] as number[])[b.length] as number;
}

/**
 * Refuses a context key that is neither a setting of this stack nor the CDK's own: a misspelt
 * setting (`pollerConcurency`) would otherwise be ignored, and its default deployed in silence.
 *
 * @example
 * checkContextKeys({ pollerConcurency: '4' }) // throws: ... did you mean pollerConcurrency?
 */
export function checkContextKeys(context: Record<string, unknown>): void {
  const ours = Object.keys(CONTEXT_DEFAULTS);
  for (const key of Object.keys(context)) {
    if (ours.includes(key) || CDK_KEYS.has(key) || /[:@]/.test(key)) continue;
    const [closest] = ours
      .map((name) => ({ name, d: distance(key.toLowerCase(), name.toLowerCase()) }))
      .sort((a, b) => a.d - b.d);
    const hint =
      closest && closest.d <= Math.max(2, Math.floor(key.length / 3))
        ? `did you mean ${closest.name}?`
        : `the settings are ${ours.join(', ')}`;
    throw new SettingsError(key, `context ${key} is not a setting of this stack; ${hint}`);
  }
}

const SECRET_ARN =
  /^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:([A-Za-z0-9/_+=.@-]+)-[A-Za-z0-9]{6}$/;

/** A secret named by name or complete ARN (the 6-character suffix included), or unset. */
function secretSetting(
  node: Node,
  key: 'existingSecretName' | 'existingIdentitySecretName',
): string | undefined {
  const value = text(node, key);
  if (value !== undefined && !SECRET_ARN.test(value) && !/^[A-Za-z0-9/_+=.@-]{1,512}$/.test(value)) {
    throw new SettingsError(
      key,
      `context ${key} must be a secret name or a complete secret ARN (ending in the 6-character suffix), got ${JSON.stringify(value)}`,
    );
  }
  return value;
}

/** The secret's name, from a name or a complete ARN. */
const secretNameOf = (value: string) => SECRET_ARN.exec(value)?.[1] ?? value;

export function readSettings(node: Node): Settings {
  checkContextKeys(node.getAllContext() as Record<string, unknown>);
  const eventsIntervalSeconds = parseRate('eventsRate', text(node, 'eventsRate') ?? '');
  const credentialsIntervalSeconds = parseRate('credentialsRate', text(node, 'credentialsRate') ?? '');

  const apiAuth = text(node, 'apiAuth');
  if (apiAuth !== 'NONE' && apiAuth !== 'AWS_IAM') {
    throw new SettingsError(
      'apiAuth',
      `context apiAuth must be NONE or AWS_IAM, got ${JSON.stringify(apiAuth ?? '')}`,
    );
  }

  const alarmEmail = text(node, 'alarmEmail');
  if (alarmEmail !== undefined && !/^[^\s@<>]+@[^\s@<>]+\.[^\s@<>]+$/.test(alarmEmail)) {
    throw new SettingsError(
      'alarmEmail',
      `context alarmEmail must be an e-mail address, got ${JSON.stringify(alarmEmail)}`,
    );
  }

  const existingSecret = secretSetting(node, 'existingSecretName');
  const existingIdentitySecret = secretSetting(node, 'existingIdentitySecretName');
  // One secret for both would let the API's function read the providers' credentials again.
  if (
    existingSecret !== undefined &&
    existingIdentitySecret !== undefined &&
    secretNameOf(existingSecret) === secretNameOf(existingIdentitySecret)
  ) {
    throw new SettingsError(
      'existingIdentitySecretName',
      `context existingIdentitySecretName must name another secret than existingSecretName (${JSON.stringify(existingSecret)}): the API's function reads that one, and must not read the identity providers' credentials`,
    );
  }

  const logRetentionDays = integer(node, 'logRetentionDays', 1, 3653);
  if (!(RETENTION_DAYS as readonly number[]).includes(logRetentionDays)) {
    throw new SettingsError(
      'logRetentionDays',
      `context logRetentionDays must be one of the values CloudWatch Logs accepts (${RETENTION_DAYS.join(', ')}), got ${logRetentionDays}`,
    );
  }

  // A lag alarm below the interval would fire on every quiet stretch between two runs.
  const eventsLagAlarmSeconds = integer(node, 'eventsLagAlarmSeconds', 60, 30 * 86_400);
  if (eventsLagAlarmSeconds <= eventsIntervalSeconds) {
    throw new SettingsError(
      'eventsLagAlarmSeconds',
      `context eventsLagAlarmSeconds (${eventsLagAlarmSeconds}) must be more than the eventsRate interval (${eventsIntervalSeconds} s)`,
    );
  }
  const credentialsLagAlarmSeconds = integer(node, 'credentialsLagAlarmSeconds', 60, 30 * 86_400);
  if (credentialsLagAlarmSeconds <= credentialsIntervalSeconds) {
    throw new SettingsError(
      'credentialsLagAlarmSeconds',
      `context credentialsLagAlarmSeconds (${credentialsLagAlarmSeconds}) must be more than the credentialsRate interval (${credentialsIntervalSeconds} s)`,
    );
  }

  // 2 is the least maximum concurrency an SQS event source accepts, 1000 the most.
  const pollerConcurrency = integer(node, 'pollerConcurrency', 2, 1000);
  const reserved = text(node, 'pollerReservedConcurrency');
  let pollerReservedConcurrency: number | undefined;
  if (reserved !== undefined && reserved !== 'none') {
    pollerReservedConcurrency = integer(node, 'pollerReservedConcurrency', 1, 1000);
    // The event source takes messages for up to pollerConcurrency invocations whatever the
    // reservation; Lambda throttles those beyond it, and each throttled message counts a receive
    // towards the dead-letter queue.
    if (pollerReservedConcurrency < pollerConcurrency) {
      throw new SettingsError(
        'pollerReservedConcurrency',
        `context pollerReservedConcurrency (${pollerReservedConcurrency}) must be at least pollerConcurrency (${pollerConcurrency}): a worker reserved below its queue's maximum concurrency is throttled, and its throttled messages end in the dead-letter queue. Use none to reserve nothing`,
      );
    }
  }
  const quotaAlarm = text(node, 'quotaAlarmThreshold');

  const coreSegment = text(node, 'apiCoreSegment');
  if (coreSegment !== undefined && !/^[A-Za-z0-9._~-]+$/.test(coreSegment)) {
    throw new SettingsError(
      'apiCoreSegment',
      `context apiCoreSegment must be one URL path segment, got ${JSON.stringify(coreSegment)}`,
    );
  }
  const tenantId = text(node, 'tenantId');
  if (tenantId !== undefined && !/^[1-9]\d*$/.test(tenantId)) {
    throw new SettingsError(
      'tenantId',
      `context tenantId must be a positive integer, got ${JSON.stringify(tenantId)}`,
    );
  }
  const logLevel = text(node, 'logLevel')?.toLowerCase();
  if (logLevel !== 'debug' && logLevel !== 'info' && logLevel !== 'warn' && logLevel !== 'error') {
    throw new SettingsError(
      'logLevel',
      `context logLevel must be debug, info, warn or error, got ${JSON.stringify(logLevel ?? '')}`,
    );
  }

  const sourceMapTraces = text(node, 'sourceMapTraces');
  if (sourceMapTraces !== 'on' && sourceMapTraces !== 'off') {
    throw new SettingsError(
      'sourceMapTraces',
      `context sourceMapTraces must be on or off, got ${JSON.stringify(sourceMapTraces ?? '')}`,
    );
  }

  return {
    eventsIntervalSeconds,
    credentialsIntervalSeconds,
    alertsConfig: text(node, 'alertsConfig') ?? CONTEXT_DEFAULTS.alertsConfig,
    ...(alarmEmail ? { alarmEmail } : {}),
    apiAuth,
    ...(existingSecret ? { existingSecret } : {}),
    ...(existingIdentitySecret ? { existingIdentitySecret } : {}),
    logRetentionDays,
    eventsLagAlarmSeconds,
    credentialsLagAlarmSeconds,
    ...(quotaAlarm === undefined
      ? {}
      : { quotaAlarmThreshold: integer(node, 'quotaAlarmThreshold', 0, 1_000_000) }),
    pollerConcurrency,
    ...(pollerReservedConcurrency ? { pollerReservedConcurrency } : {}),
    upstream: {
      apiUrl: httpUrl('apiUrl', text(node, 'apiUrl')),
      coreSegment,
      tenantId,
      appUrl: httpUrl('appUrl', text(node, 'appUrl')),
    },
    logLevel,
    sourceMapTraces: sourceMapTraces === 'on',
  };
}

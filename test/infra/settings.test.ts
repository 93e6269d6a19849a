/**
 * What synth is given: the context settings and the alert config.
 *
 * Context settings: cdk.json holds the same defaults as the code, and a bad value fails synth
 * with a SettingsError (code `settings`, the key as `key`) whose message names the key and what
 * it accepts. The alert config: a missing or invalid file stops synth with a clear, path-precise
 * message; a valid one is shipped as is, and its secret references are listed for the operator.
 *
 * One file for both (over 300 lines for that): each test file is a process of its own that loads
 * aws-cdk-lib and the stack's modules again (the alert config's file alone: 4 CPU seconds, for 0.1 s
 * of tests).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { loadDeployableConfig, PROJECT_ROOT, secretNamesIn } from '../../infra/alerts-config.ts';
import { pollerTiming, queueTiming } from '../../infra/schedule.ts';
import { CONTEXT_DEFAULTS, parseRate, readSettings, SettingsError } from '../../infra/settings.ts';
import { build, EXAMPLE_CONFIG } from './harness.ts';

const settings = (context: Record<string, unknown>) => readSettings(new App({ context }).node);

/**
 * The real app (infra/app.ts) under tsx's loader, as `cdk synth` runs it (cdk.json: `npx tsx
 * infra/app.ts`), with `context` as the CLI passes -c (CDK_CONTEXT_JSON). Node with tsx's loader
 * rather than the tsx command, which starts a second Node process to do the same.
 */
function synthApp(context: Record<string, unknown>) {
  const outdir = mkdtempSync(join(tmpdir(), 'ea-settings-'));
  try {
    return spawnSync(process.execPath, ['--import', 'tsx', 'infra/app.ts'], {
      cwd: PROJECT_ROOT,
      env: { ...process.env, CDK_CONTEXT_JSON: JSON.stringify(context), CDK_OUTDIR: outdir },
      encoding: 'utf8',
      timeout: 60_000,
    });
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

/** What `run` threw; fails the test when it threw nothing. */
function thrown(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw, got none');
}

describe('cdk.json', () => {
  const cdkJson = JSON.parse(readFileSync(join(PROJECT_ROOT, 'cdk.json'), 'utf8'));

  it('runs the app with tsx and holds every context default the code has', () => {
    expect(cdkJson.app).toBe('npx tsx infra/app.ts');
    // Plus the CLI's own switch: no telemetry from any `cdk` command run in this project.
    expect(cdkJson.context).toEqual({ ...CONTEXT_DEFAULTS, 'cli-telemetry': false });
  });

  it('defaults: events every minute, credentials every hour, auth NONE, the alert config at the root', () => {
    const s = settings({});
    expect(s).toMatchObject({
      eventsIntervalSeconds: 60,
      credentialsIntervalSeconds: 3600,
      apiAuth: 'NONE',
      alertsConfig: 'alerts.config.json',
      logRetentionDays: 30,
      pollerConcurrency: 2,
      logLevel: 'info',
    });
    expect(s.alarmEmail).toBeUndefined();
    expect(s.existingSecret).toBeUndefined();
    // Nothing reserved: the event sources' maximum concurrency bounds the workers.
    expect(s.pollerReservedConcurrency).toBeUndefined();
    // Unset: the alarm takes the alert config's upstream.quotaReserve (stack.test.ts).
    expect(s.quotaAlarmThreshold).toBeUndefined();
  });

  it('the aws-cdk CLI is pinned to a 2.x in devDependencies', () => {
    const pkg = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8'));
    expect(pkg.devDependencies['aws-cdk']).toMatch(/^2\.\d+\.\d+$/);
  });
});

describe('context validation', () => {
  it.each([
    [{ eventsRate: 'cron(0 * * * ? *)' }, /context eventsRate must be an EventBridge Scheduler rate/],
    [{ credentialsRate: 'rate(0 hours)' }, /context credentialsRate must be an EventBridge Scheduler rate/],
    [{ apiAuth: 'IAM' }, /context apiAuth must be NONE or AWS_IAM, got "IAM"/],
    [{ alarmEmail: 'oncall' }, /context alarmEmail must be an e-mail address/],
    [
      { logRetentionDays: 10 },
      /context logRetentionDays must be one of the values CloudWatch Logs accepts \(1, 3, 5, 7, 14, 30/,
    ],
    [{ logRetentionDays: 'forever' }, /context logRetentionDays must be an integer from 1 to 3653/],
    [
      { eventsLagAlarmSeconds: 60 },
      /context eventsLagAlarmSeconds \(60\) must be more than the eventsRate interval \(60 s\)/,
    ],
    [{ quotaAlarmThreshold: -1 }, /context quotaAlarmThreshold must be an integer/],
    [{ pollerReservedConcurrency: 0 }, /context pollerReservedConcurrency must be an integer from 1 to 1000/],
    [
      { pollerReservedConcurrency: 1 },
      /context pollerReservedConcurrency \(1\) must be at least pollerConcurrency \(2\).*Use none to reserve nothing/,
    ],
    // The least maximum concurrency an SQS event source accepts is 2.
    [{ pollerConcurrency: 1 }, /context pollerConcurrency must be an integer from 2 to 1000, got "1"/],
    [{ pollerConcurrency: '2.5' }, /context pollerConcurrency must be an integer from 2 to 1000/],
    [
      { existingSecretName: 'arn:aws:secretsmanager:eu-west-1:1:secret:x' },
      /context existingSecretName must be a secret name or a complete secret ARN/,
    ],
    [
      { existingIdentitySecretName: 'ops secrets' },
      /context existingIdentitySecretName must be a secret name or a complete secret ARN/,
    ],
    // One secret for both: the API's function would read the identity providers' credentials.
    [
      {
        existingIdentitySecretName: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:ops/ea-AbC123',
        existingSecretName: 'ops/ea',
      },
      /context existingIdentitySecretName must name another secret than existingSecretName/,
    ],
    [{ apiUrl: 'ftp://x' }, /context apiUrl must be an http\(s\) URL/],
    [{ sourceMapTraces: 'yes' }, /context sourceMapTraces must be on or off, got "yes"/],
    [{ apiCoreSegment: 'a/b' }, /context apiCoreSegment must be one URL path segment/],
    [{ tenantId: 'acme' }, /context tenantId must be a positive integer/],
    [{ logLevel: 'trace' }, /context logLevel must be debug, info, warn or error/],
    [{ tenantId: { id: 1 } }, /context tenantId must be a string, got \{"id":1\}/],
    [{ appUrl: 'example.com/app' }, /context appUrl must be an http\(s\) URL, got "example.com\/app"/],
    [
      { credentialsLagAlarmSeconds: 3600 },
      /context credentialsLagAlarmSeconds \(3600\) must be more than the credentialsRate interval \(3600 s\)/,
    ],
  ])('%o fails with a message naming the key', (context, message) => {
    expect(() => settings(context)).toThrow(message);
    // The same refusal as a SettingsError whose key is the one set: a caller can tell which
    // setting to fix without parsing the message (a plain Error has neither code nor key).
    const error = thrown(() => settings(context));
    expect(error).toBeInstanceOf(SettingsError);
    expect(error).toMatchObject({ name: 'SettingsError', code: 'settings', key: Object.keys(context)[0] });
  });

  it('a bad rate given to parseRate is a SettingsError for the key it was given', () => {
    const error = thrown(() => parseRate('eventsRate', 'every minute'));
    expect(error).toBeInstanceOf(SettingsError);
    expect(error).toMatchObject({ code: 'settings', key: 'eventsRate' });
    expect((error as Error).message).toContain('got "every minute"');
  });

  it('synth stops with the message alone and exit code 1', () => {
    const run = synthApp({ apiAuth: 'IAM' });
    expect(run.status).toBe(1);
    expect(run.stderr).toBe('exposure-alerts: context apiAuth must be NONE or AWS_IAM, got "IAM"\n');
  }, 60_000);

  it('an unknown setting fails synth, naming the closest one; the CDK own keys pass', () => {
    const typo = thrown(() => settings({ pollerConcurency: '4' }));
    expect(typo).toBeInstanceOf(SettingsError);
    expect((typo as SettingsError).key).toBe('pollerConcurency');
    expect((typo as Error).message).toBe(
      'context pollerConcurency is not a setting of this stack; did you mean pollerConcurrency?',
    );
    expect((thrown(() => settings({ eventrate: 'rate(1 minute)' })) as Error).message).toMatch(
      /did you mean eventsRate\?$/,
    );
    // Nothing close: the list of settings.
    expect((thrown(() => settings({ colour: 'blue' })) as Error).message).toMatch(
      /^context colour is not a setting of this stack; the settings are eventsRate, credentialsRate, /,
    );
    // Feature flags, toolkit keys, lookups and the CLI's own switches are the CDK's business.
    expect(() =>
      settings({
        '@aws-cdk/aws-lambda:recognizeLayerVersion': true,
        'aws:cdk:bundling-stacks': [],
        'availability-zones:account=123456789012:region=eu-west-1': ['eu-west-1a'],
        'cli-telemetry': false,
        'acknowledged-issue-numbers': [32775],
      }),
    ).not.toThrow();
  });

  it('through the real app as cdk synth runs it: -c pollerConcurency=4 ends synth with the closest setting', () => {
    const run = synthApp({ ...CONTEXT_DEFAULTS, 'cli-telemetry': false, pollerConcurency: '4' });
    expect(run.stderr).toBe(
      'exposure-alerts: context pollerConcurency is not a setting of this stack; did you mean pollerConcurrency?\n',
    );
    expect(run.status).toBe(1);
  }, 60_000);

  it('accepts -c strings for numbers, "none" for no reserved concurrency, and trims', () => {
    const s = settings({
      logRetentionDays: '90',
      pollerReservedConcurrency: 'none',
      eventsRate: ' rate(2 minutes) ',
      alarmEmail: 'oncall@example.com',
      pollerConcurrency: '6',
      quotaAlarmThreshold: '0',
    });
    expect(s.logRetentionDays).toBe(90);
    expect(s.pollerReservedConcurrency).toBeUndefined();
    expect(s.pollerConcurrency).toBe(6);
    // 0 is a threshold (alarm only when none is left), not "unset".
    expect(s.quotaAlarmThreshold).toBe(0);
    expect(settings({ pollerConcurrency: 4, pollerReservedConcurrency: '4' }).pollerReservedConcurrency).toBe(
      4,
    );
    expect(s.eventsIntervalSeconds).toBe(120);
    expect(s.alarmEmail).toBe('oncall@example.com');
  });

  it('parses Scheduler rates in every unit, singular or plural', () => {
    expect(parseRate('k', 'rate(1 minute)')).toBe(60);
    expect(parseRate('k', 'rate(15 minutes)')).toBe(900);
    expect(parseRate('k', 'rate(2 hours)')).toBe(7200);
    expect(parseRate('k', 'rate(1 day)')).toBe(86_400);
  });
});

describe('poller timing', () => {
  it('times out before the next run and drops events older than half an interval, within what AWS accepts', () => {
    const minute = pollerTiming(60);
    expect(minute.timeout.toSeconds()).toBe(55);
    expect(minute.maxEventAge.toSeconds()).toBe(60);
    const hour = pollerTiming(3600);
    expect(hour.timeout.toSeconds()).toBe(300);
    expect(hour.maxEventAge.toSeconds()).toBe(1800);
    expect(hour.failures).toMatchObject({ threshold: 1 });
    const day = pollerTiming(86_400);
    expect(day.maxEventAge.toSeconds()).toBe(6 * 3600);
    expect(day.period.toSeconds()).toBe(86_400);
    expect(pollerTiming(600).failures.threshold).toBe(1);
    expect(pollerTiming(300).failures.threshold).toBe(3);
  });
});

describe('stream queue timing', () => {
  it.each([
    [60, 55],
    [3600, 300],
    [86_400, 300],
  ])(
    'interval %i s (worker timeout %i s): visibility 6x the timeout, dead letters after 3 receives, a backlog only past that',
    (interval, timeout) => {
      const q = queueTiming(interval);
      expect(pollerTiming(interval).timeout.toSeconds()).toBe(timeout);
      expect(q.visibilityTimeout.toSeconds()).toBe(6 * timeout);
      expect(q.maxReceiveCount).toBe(3);
      expect(q.deadLetterAfter.toSeconds()).toBe(3 * 6 * timeout);
      // A message failing every time waits at most deadLetterAfter: only a backlog is older.
      expect(q.backlogAlarmSeconds).toBeGreaterThan(q.deadLetterAfter.toSeconds());
      // ...and SQS keeps messages long enough for both the dead-letter move and the alarm to happen.
      expect(q.retention.toSeconds()).toBeGreaterThan(q.backlogAlarmSeconds);
      // Within what SQS accepts: visibility up to 12 h, retention from 60 s to 14 days.
      expect(q.visibilityTimeout.toSeconds()).toBeLessThanOrEqual(43_200);
      expect(q.retention.toSeconds()).toBeGreaterThanOrEqual(60);
      expect(q.retention.toSeconds()).toBeLessThanOrEqual(1_209_600);
    },
  );
});

function writeConfig(value: unknown): string {
  const dir = mkdtempSync(join(tmpdir(), 'alerts-config-test-'));
  const path = join(dir, 'alerts.config.json');
  writeFileSync(path, typeof value === 'string' ? value : JSON.stringify(value));
  return path;
}

describe('alert config at synth', () => {
  it('synth refuses an invalid config, listing every problem by its path', () => {
    const example = JSON.parse(readFileSync(EXAMPLE_CONFIG, 'utf8'));
    example.routes[1].match.colour = 'red';
    example.routes[0].to.push('pager');
    example.destinations.soc.url = 'not a url';
    const path = writeConfig(example);
    let message = '';
    try {
      build({ alertsConfig: path });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/^alert config .*alerts\.config\.json is invalid \(\d+ problems?\)/);
    expect(message).toMatch(/routes\[1\]\.match\.colour/);
    expect(message).toMatch(/destinations\.soc\.url/);
    expect(message).toContain('-c alertsConfig=<path>');
  });

  it('cross-reference problems fail too (a route to a destination that does not exist)', () => {
    const example = JSON.parse(readFileSync(EXAMPLE_CONFIG, 'utf8'));
    example.routes[0].to = ['pager'];
    expect(() => build({ alertsConfig: writeConfig(example) })).toThrow(
      /routes\[0\]\.to\[0\]: no destination named "pager"/,
    );
  });

  it('synth refuses a file that is not JSON', () => {
    expect(() => build({ alertsConfig: writeConfig('{ "sources": ') })).toThrow(/is not valid JSON/);
  });

  it('a missing file says to create it or pass -c alertsConfig', () => {
    expect(() => build({ alertsConfig: 'does/not/exist.json' })).toThrow(
      /alert config .*does\/not\/exist\.json does not exist: create it \(start from infra\/alerts\.config\.example\.json.*or pass -c alertsConfig=<path>/,
    );
  });

  it('a relative path is read from the project root, whatever the working directory', () => {
    const loaded = loadDeployableConfig('infra/alerts.config.example.json');
    expect(loaded.source).toBe(EXAMPLE_CONFIG);
    expect(readFileSync(join(loaded.layerDir, 'alerts.config.json'), 'utf8')).toBe(
      readFileSync(EXAMPLE_CONFIG, 'utf8'),
    );
    expect(loaded.secretNames).toEqual([
      'jiraApiToken',
      'oncallRoutingKey',
      'sentinelClientSecret',
      'servicenowPassword',
      'siemKey',
      'socDiscordWebhook',
      'socGoogleChatWebhook',
      'socMattermostWebhook',
      'socSlackBotToken',
      'socSlackWebhook',
      'socTeamsWebhook',
      'splunkHecToken',
    ]);
  });

  it('finds every secret reference, wherever the schema allows one', () => {
    expect(
      secretNamesIn({
        destinations: {
          a: {
            type: 'webhook',
            url: { secret: 'u' },
            headers: { 'X-Key': { secret: 'h' } },
            signingSecret: { secret: 's' },
          },
          b: { type: 'email', apiKey: { secret: 'k' }, url: 'https://x' },
          c: { type: 'slack', url: { secret: 'u' } },
        },
      }),
    ).toEqual(['h', 'k', 's', 'u']);
  });
});

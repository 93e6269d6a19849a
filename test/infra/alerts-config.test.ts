/**
 * The alert config at synth: a missing or invalid file stops synth with a clear, path-precise
 * message; a valid one is shipped as is, and its secret references are listed for the operator.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadDeployableConfig, secretNamesIn } from '../../infra/alerts-config.ts';
import { build, EXAMPLE_CONFIG } from './harness.ts';

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

/**
 * The table of each config under `.data/` (lib/cli/local-tables.ts): named by the config's path
 * relative to the folder, never by its content, and always a name DynamoDB takes. The journey
 * through `npm start` is test/cli/start-configs.test.ts.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configTableName, DEMO_TABLE, localConfigPath, localTableFor } from '../../lib/cli/local-tables.ts';

/** DynamoDB's rule for a table name. */
const VALID = /^[A-Za-z0-9_.-]{3,255}$/;

describe('a config file’s table', () => {
  it('is a readable slug of its path and a short hash, within DynamoDB’s rule', () => {
    expect(configTableName('configs/prod.json')).toMatch(/^exposure-alerts-configs-prod-[0-9a-f]{8}$/);
    for (const path of ['../shared/alerts.json', 'ünïcode config.json', `${'x/'.repeat(200)}a.json`, '.json'])
      expect(configTableName(path)).toMatch(VALID);
    // Two paths a slug makes alike are still two tables.
    expect(configTableName('a b.json')).not.toBe(configTableName('a-b.json'));
    // Room for the dry run's `-dry-run`.
    expect(`${configTableName(`${'y'.repeat(300)}.json`)}-dry-run`).toMatch(VALID);
  });

  it('follows the path as the folder sees it, not how it was written, nor what the file holds', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ea-tables-'));
    expect(localConfigPath({}, dir)).toBeUndefined(); // the built-in demo
    expect(localConfigPath({ ALERTS_CONFIG: './configs/../configs/soc.json' }, dir)).toBe('configs/soc.json');
    expect(localConfigPath({ ALERTS_CONFIG: join(dir, 'configs/soc.json') }, dir)).toBe('configs/soc.json');
    await writeFile(join(dir, 'alerts.config.json'), '{}');
    expect(localConfigPath({}, dir)).toBe('alerts.config.json');
    expect(localConfigPath({ ALERTS_CONFIG: ' ' }, dir)).toBe('alerts.config.json');
    const data = join(dir, '.data');
    expect(localTableFor(undefined, data)).toBe(DEMO_TABLE);
    const before = localTableFor('alerts.config.json', data);
    await writeFile(join(dir, 'alerts.config.json'), '{"routes": []}');
    expect(localTableFor('alerts.config.json', data)).toBe(before);
  });
});

/**
 * A config file as a worker reads it (lib/rules/source.ts): without `identity`, checked without the
 * identity schema; with it, by the whole check. Either way the same config, the same warnings and
 * the same problems, in the same order, as checkConfig (what `config validate` and synth use).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../lib/errors.ts';
import { checkConfig, listedProblems } from '../../lib/rules/config.ts';
import { loadConfigFile } from '../../lib/rules/source.ts';

const dir = mkdtempSync(join(tmpdir(), 'config-source-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const NOW = new Date('2026-12-01T00:00:00Z');
let files = 0;
/** What loadConfigFile gives for `input`: the config and warnings, or the ConfigError's problems. */
async function read(input: unknown) {
  const path = join(dir, `config-${++files}.json`);
  writeFileSync(path, JSON.stringify(input));
  try {
    return await loadConfigFile(path, NOW);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return { problems: error.problems };
  }
}
/** The same, as checkConfig sees it. */
function expected(input: unknown) {
  const check = checkConfig(input, NOW);
  return check.config
    ? { config: check.config, warnings: check.warnings }
    : { problems: listedProblems(check.errors) };
}

const corp = {
  type: 'entra',
  tenantId: '11111111-2222-3333-4444-555555555555',
  clientId: 'app-1',
  clientSecret: { secret: 'corpSecret' },
  domains: ['acme.com'],
};
const base = (extra: Record<string, unknown> = {}) => ({
  sources: { credentials: { domains: ['acme.com'] } },
  destinations: { soc: { type: 'console' } },
  routes: [{ name: 'all', match: {}, to: ['soc'] }],
  ...extra,
});

describe('a config file as a worker reads it', () => {
  it.each([
    ['without identity', base({ silences: [{ match: {}, until: '2026-01-01T00:00:00Z', reason: 'old' }] })],
    [
      'with identity at the top level and in a tenant (its defaults filled in)',
      base({
        identity: { providers: { corp }, auto: { atRisk: ['revokeSessions'] } },
        tenants: [
          { id: 7, name: 'Globex', identity: { providers: { shop: { ...corp, domains: ['globex.com'] } } } },
        ],
      }),
    ],
    [
      'a route matching on identity, without identity',
      base({ routes: [{ name: 'a', match: { identity: ['at_risk'] }, to: ['soc'] }] }),
    ],
  ])('%s: the config and warnings checkConfig gives', async (_name, input) => {
    const got = await read(input);
    expect(got).toEqual(expected(input));
    expect('config' in got).toBe(true);
  });

  it.each([
    [
      'problems without identity',
      base({
        sources: { credentials: { domains: [5] } },
        routes: [{ name: 'a', to: ['nowhere'] }],
        colour: 1,
      }),
    ],
    [
      "problems before, in and after identity's, and in a tenant's",
      base({
        sources: { credentials: { domains: ['acme.com'], pageSize: 0 } },
        identity: {
          providers: { corp: { ...corp, tenantId: 'no spaces allowed' }, bad: { type: 'ldap' } },
          auto: { atRisk: ['disable'] },
          extra: true,
        },
        actions: { slack: { teamId: 'x' } },
        tenants: [{ id: 7, name: 'Globex', identity: { providers: { corp: { ...corp, domains: [] } } } }],
      }),
    ],
    ['an identity that is not an object', base({ identity: null })],
    [
      "a tenant's identity that is not an object",
      base({ tenants: [{ id: 7, name: 'Globex', identity: 'corp' }] }),
    ],
  ])('%s: the problems checkConfig gives, in its order', async (_name, input) => {
    const got = await read(input);
    expect(got).toEqual(expected(input));
    expect((got as { problems: string[] }).problems.length).toBeGreaterThan(0);
  });

  it('names an unreadable file and text that is not JSON', async () => {
    await expect(loadConfigFile(join(dir, 'missing.json'))).rejects.toThrow(/cannot be read \(ENOENT\)/);
    const path = join(dir, 'broken.json');
    writeFileSync(path, '{"identity": ');
    await expect(loadConfigFile(path)).rejects.toThrow(`${path} is not valid JSON`);
  });
});

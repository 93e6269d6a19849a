/**
 * The identity secret, attacked (section 12, least privilege): an identity secret that is not the
 * JSON object it must be (a token pasted as it is, a value cut short, an empty string, `{}`), read
 * by a worker's start as `identitySecrets` reads it. The start goes on from the main secret with a
 * warning when that holds every credential, stops with a ConfigError naming IDENTITY_SECRET_ID when
 * not, and no warning or error holds any part of a secret value (JSON's "Unexpected token 's'"
 * would name the first letter of a pasted token).
 */
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../lib/errors.ts';
import { identitySecrets } from '../../lib/identity/secrets.ts';

const config = { identity: { providers: { shop: { type: 'okta', token: { secret: 'shopToken' } } } } };
const TOKEN = 'zq00Okta-Token-Value';

const told = async (text: string, main: Record<string, unknown>) => {
  const warnings: string[] = [];
  let error: unknown;
  const out = await identitySecrets({ identitySecretId: 'idp' }, main, config, (w) => warnings.push(w), {
    fetchSecret: async () => text,
  }).catch((e: unknown) => {
    error = e;
    return undefined;
  });
  return { out, warnings, error };
};

describe('an identity secret that is not what it must be', () => {
  for (const text of [TOKEN, `{"shopToken": ${TOKEN}}`, `{"shopToken": "${TOKEN}`, `"${TOKEN}"`, '', '[]'])
    it(`${JSON.stringify(text.slice(0, 24))}: read from the main secret, or a stop; no part of a value said`, async () => {
      const moved = await told(text, {});
      expect(moved.error).toBeInstanceOf(ConfigError);
      expect((moved.error as Error).message).toMatch(/^IDENTITY_SECRET_ID idp cannot be read/);
      const unmoved = await told(text, { shopToken: 'mainTokenValue' });
      expect(unmoved.out).toEqual({ shopToken: 'mainTokenValue' });
      for (const said of [(moved.error as Error).message, ...unmoved.warnings]) {
        expect(said).not.toMatch(/'z'|zq00|Okta-Token|mainTokenValue/);
        expect(said).not.toContain("token '");
      }
    });

  it('{}: every name from the main secret, each with a warning naming the move, never its value', async () => {
    const { out, warnings } = await told('{}', { shopToken: 'mainTokenValue' });
    expect(out).toEqual({ shopToken: 'mainTokenValue' });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/"shopToken" is not in the identity secret/);
    expect(warnings[0]).not.toContain('mainTokenValue');
  });
});

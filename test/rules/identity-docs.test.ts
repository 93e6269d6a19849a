/**
 * The config reference and `config schema` describe every identity key in its own words (not a
 * destination's, which share suffixes such as `type` and `secret`), and say the two facts a reader
 * must not miss: a tenant's identity is never inherited, and Okta takes an API token only for now.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { withKindDocs } from '../../lib/rules/config-docs.ts';
import { docFor, documentedJsonSchema, schemaKeys } from '../../lib/rules/config-reference.ts';

describe('identity keys in the config reference', () => {
  beforeAll(() => withKindDocs());
  const keys = () => schemaKeys(documentedJsonSchema()).filter((k) => /identity/.test(k.path));

  it('every identity key, at the top level and in a tenant, has a description of its own', () => {
    const found = keys();
    // providers, each type's keys, auto, and match.identity in routes and silences, twice over.
    expect(found.length).toBeGreaterThan(40);
    for (const { path, node } of found) {
      expect(typeof node.description, path).toBe('string');
      expect(node.description, path).not.toMatch(/kind of destination|socSlackWebhook/);
    }
    expect(docFor('tenants[].identity.providers.<name>{entra}.tenantId')).toBe(
      docFor('identity.providers.<name>{entra}.tenantId'),
    );
  });

  it("says a tenant's identity is never inherited, and that Okta's OAuth service app is a later addition", () => {
    expect(docFor('tenants[].identity')?.text).toMatch(/never inherited/);
    expect(docFor('identity')?.text).toMatch(/nothing is inherited/);
    expect(docFor('identity.providers.<name>{okta}.type')?.text).toMatch(
      /OAuth service app .* later addition: an API token only for now/,
    );
    expect(docFor('identity.auto.atRisk')?.text).toMatch(/only `revokeSessions` and `confirmCompromised`/);
    expect(docFor('routes[].match.identity')?.text).toMatch(/without a verdict .* match none/);
  });
});

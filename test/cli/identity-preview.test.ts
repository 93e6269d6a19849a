/**
 * `preview` with what an identity provider answered (`identityAnswer` beside a credential's
 * fields), through the real CLI (runCli in this process): the verdict decided as a run decides it (the leak's
 * date from the item), set as `_identity` before routing so routes on `identity` take it, shown
 * with the routes it matched and in the payloads; a bad answer refused by its path.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../lib/cli/run.ts';
import { captureIo } from '../helpers/io.ts';

const credential = {
  id: 4242,
  identity_name: 'kim.lee@acme.com',
  domain: 'acme.com',
  hash: 'Correct-Horse-9',
  hash_type: 'plaintext',
  imported_at: '2026-11-20T08:00:00+00:00',
  source_id: 'combo-1',
  source: { id: 'combo-1', name: 'Combo list 1', breached_at: '2026-06-01T00:00:00Z', leaked_at: null },
};
const account = (passwordChangedAt: string | null, extra: Record<string, unknown> = {}) => ({
  provider: 'corp',
  account: { id: 'u-1', displayName: 'Kim Lee', enabled: true, passwordChangedAt, ...extra },
});

const config = {
  sources: { credentials: { domains: ['acme.com', 'acme.io'] } },
  destinations: {
    pager: { type: 'webhook', url: 'https://pager.example.com/in' },
    local: { type: 'console' },
  },
  routes: [
    { name: 'live', match: { identity: ['at_risk'] }, to: ['pager'] },
    { name: 'all', to: ['local'] },
  ],
  identity: {
    providers: {
      corp: {
        type: 'entra',
        tenantId: '11111111-2222-3333-4444-555555555555',
        clientId: 'app-1',
        clientSecret: { secret: 'corpSecret' },
        domains: ['acme.com'],
      },
      shop: {
        type: 'okta',
        orgUrl: 'https://acme.okta.com',
        token: { secret: 'shopToken' },
        domains: ['acme.io'],
      },
    },
  },
};

let dir: string;
let configFile: string;
const file = async (name: string, content: unknown) => {
  const path = join(dir, name);
  await writeFile(path, JSON.stringify(content));
  return path;
};
async function cli(argv: string[], env: Record<string, string> = {}) {
  const io = captureIo(env);
  const code = await runCli(argv, io);
  return { code, out: io.out, err: io.err };
}
const preview = async (item: unknown) =>
  cli(['preview', await file(`item-${Math.random().toString(36).slice(2)}.json`, item)], {
    ALERTS_CONFIG: configFile,
  });

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ea-identity-preview-'));
  configFile = await file('config.json', config);
});

describe('preview with an identity answer', () => {
  it('a password changed before the leak: at risk, routed by the identity route, _identity in the body', async () => {
    const r = await preview({ ...credential, identityAnswer: account('2026-01-01T00:00:00Z') });
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toContain(
      'identity: Entra ID corp: Kim Lee · enabled · password changed 2026-01-01, before the leak (2026-06-01) → at risk; routes matched: live, all\n',
    );
    expect(r.out).toContain('=== pager (webhook) · routes: live ===');
    const body = r.out.slice(r.out.indexOf('=== pager'));
    expect(body).toContain('"_identity": {');
    expect(body).toContain('"verdict": "at_risk"');
    expect(body).toContain('"leakDate": "2026-06-01T00:00:00Z"');
    // Not an upstream field: the answer itself is never sent anywhere.
    expect(r.out).not.toContain('identityAnswer');
  });

  it('a password changed after the leak: rotated, and the identity route does not match', async () => {
    const r = await preview({ ...credential, identityAnswer: account('2026-07-01T00:00:00Z') });
    expect(r.code).toBe(0);
    expect(r.out).toContain('→ rotated; routes matched: all\n');
    expect(r.out).not.toContain('=== pager');
  });

  it('no such account, the provider found by the login when not named; an array shows each verdict', async () => {
    const other = { ...credential, id: 4243, identity_name: 'sam@acme.io', domain: 'acme.io' };
    const r = await preview([
      { ...credential, identityAnswer: { found: false } },
      { ...other, identityAnswer: { account: { enabled: false, passwordChangedAt: null } } },
    ]);
    expect(r.code).toBe(0);
    expect(r.out).toContain(
      'identity of 4242: Entra ID corp: no such account → no account; routes matched: all\n',
    );
    expect(r.out).toContain('identity of 4243: Okta shop: cannot sign in → disabled; routes matched: all\n');
  });

  it('a lookup that failed: unknown (unavailable); a password held elsewhere: unknown (unmanaged)', async () => {
    const failed = await preview({ ...credential, identityAnswer: { unavailable: 'timed out' } });
    expect(failed.out).toContain('→ unknown (unavailable); routes matched: all\n');
    const unmanaged = await preview({
      ...credential,
      identityAnswer: account('2020-01-01T00:00:00Z', { unmanaged: true }),
    });
    expect(unmanaged.out).toContain('→ unknown (unmanaged); routes matched: all\n');
  });

  it('a bad answer is refused naming its path (exit 2)', async () => {
    const bad = await preview({
      ...credential,
      identityAnswer: account('2026-02-30T00:00:00Z', { enabled: 'yes' }),
    });
    expect(bad.code).toBe(2);
    expect(bad.err).toContain(': identityAnswer.account.enabled: expected a boolean, got a string; ');
    expect(bad.err).toContain('identityAnswer.account.passwordChangedAt: 2026-02-30 does not exist');
    const none = await preview({ ...credential, identityAnswer: { provider: 'corp' } });
    expect(none.code).toBe(2);
    expect(none.err).toContain('identityAnswer: expected exactly one of "account"');
    const unknown = await preview({ ...credential, identityAnswer: { provider: 'nope', found: false } });
    expect(unknown.code).toBe(2);
    expect(unknown.err).toContain(
      'identityAnswer.provider: no identity provider named "nope" in the config (it has: corp, shop)',
    );
  });

  it('a login outside every provider: refused unless named (then a warning); _identity given directly: refused', async () => {
    const outside = { ...credential, identity_name: 'kim@other.org', domain: 'other.org' };
    const refused = await preview({ ...outside, identityAnswer: { found: false } });
    expect(refused.code).toBe(2);
    expect(refused.err).toContain(
      "identityAnswer.provider: kim@other.org is outside every provider's domains",
    );
    const named = await preview({ ...outside, identityAnswer: { provider: 'corp', found: false } });
    expect(named.code).toBe(0);
    expect(named.err).toContain(
      "kim@other.org is outside corp's domains (acme.com): a run would not look it up there",
    );
    const event = {
      metadata: {
        estimated_created_at: '2026-11-20T10:00:00Z',
        matched_at: '2026-11-20T10:05:00Z',
        type: 'paste',
        uid: 'paste/x/1',
        severity: 'high',
      },
      identityAnswer: { found: false },
    };
    const onEvent = await preview(event);
    expect(onEvent.code).toBe(2);
    expect(onEvent.err).toContain("identityAnswer: only a credential's login has an identity verdict");
    const direct = await preview({ ...credential, _identity: { provider: 'corp', verdict: 'at_risk' } });
    expect(direct.code).toBe(2);
    expect(direct.err).toContain('_identity: preview decides the verdict itself');
  });

  it('preview --help documents the shape', async () => {
    const r = await cli(['preview', '--help']);
    expect(r.code).toBe(0);
    expect(r.out).toContain('"identityAnswer": {"provider": "corp", "found": false}');
    expect(r.out).toContain('"passwordChangedAt" is null when the password was never changed');
  });
});

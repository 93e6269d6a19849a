/**
 * Lookups through the CLI and the API against the emulator over HTTP: an account found in many
 * leaks (the seeded repeat victim), a domain with more identities than an answer lists, a keyword;
 * the password policy (masked by default, hidden, clear only when asked); hostile upstream text
 * escaped in the CLI's table; and the API's scope and validation.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LOOKUP_MAX_IDENTITIES, type LookupAnswer, lookup } from '../../lib/actions/lookup.ts';
import { createApiApp } from '../../lib/api/app.ts';
import { sha256Hex } from '../../lib/api/auth.ts';
import { runCli } from '../../lib/cli/run.ts';
import { REPEAT_VICTIM } from '../../lib/emulator/dataset.ts';
import { buildApi, newToken } from '../api/harness.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { captureIo } from '../helpers/io.ts';

const emu = useEmulator({ eventsPerTenant: 2, credentials: 400 });
const db = useDynalite();
const dataset = () => emu.running.emulator.dataset;
const upstream = () => emu.client();

describe('lookup', () => {
  it('an account in many leaks: one identity, its leaks newest first, passwords masked', async () => {
    const records = dataset().credentials.filter((c) => c.identity_name === REPEAT_VICTIM);
    expect(records.length).toBeGreaterThan(5);
    const answer = await lookup({ upstream: upstream(), passwords: 'masked' }, { account: [REPEAT_VICTIM] });
    expect(answer.identities.map((i) => i.name)).toEqual([REPEAT_VICTIM]);
    const leaks = answer.identities[0]?.leaks ?? [];
    expect(leaks).toHaveLength(records.length);
    const times = leaks.map((l) => Date.parse(l.leakedAt ?? ''));
    expect(times).toEqual([...times].sort((a, b) => b - a));
    const text = JSON.stringify(answer);
    for (const r of records) expect(text).not.toContain(r.hash.length > 2 ? r.hash : '\u0000');
    expect(leaks.every((l) => /^.\*+.$/.test(l.password ?? ''))).toBe(true);
  });

  it('hidden leaves passwords out; clear shows them, only when the policy says so', async () => {
    const hidden = await lookup({ upstream: upstream(), passwords: 'hidden' }, { account: [REPEAT_VICTIM] });
    expect(hidden.identities[0]?.leaks.some((l) => 'password' in l)).toBe(false);
    const clear = await lookup({ upstream: upstream(), passwords: 'clear' }, { account: [REPEAT_VICTIM] });
    const hashes = new Set(
      dataset()
        .credentials.filter((c) => c.identity_name === REPEAT_VICTIM)
        .map((c) => c.hash),
    );
    expect(clear.identities[0]?.leaks.every((l) => hashes.has(l.password ?? ''))).toBe(true);
  });

  it('a domain with dozens of identities: 20 listed, the rest counted; a keyword', async () => {
    const names = new Set(
      dataset()
        .credentials.filter((c) => c.domain === 'acme.test')
        .map((c) => c.identity_name),
    );
    expect(names.size).toBeGreaterThan(LOOKUP_MAX_IDENTITIES);
    const domain = await lookup({ upstream: upstream(), passwords: 'masked' }, { domain: 'acme.test' });
    expect(domain.identities).toHaveLength(LOOKUP_MAX_IDENTITIES);
    expect(domain.more).toBe(names.size - LOOKUP_MAX_IDENTITIES);
    const keyword = await lookup({ upstream: upstream(), passwords: 'masked' }, { keyword: 'kim.lee*' });
    expect(keyword.identities.map((i) => i.name)).toContain(REPEAT_VICTIM);
    expect(keyword.identities.every((i) => i.name.startsWith('kim.lee'))).toBe(true);
  });

  it('through the CLI: a table, hostile upstream text escaped; --json the same answer', async () => {
    const [hostile] = dataset().appendCredentials(1, { domain: 'acme.test' });
    if (!hostile) throw new Error('no credential');
    hostile.identity_name = 'evil\u001b[2J\u001b]0;pwned\u0007<!channel>@acme.test';
    const dir = await mkdtemp(join(tmpdir(), 'ea-lookup-'));
    await writeFile(
      join(dir, 'alerts.config.json'),
      JSON.stringify({
        destinations: { terminal: { type: 'console' } },
        routes: [{ name: 'all', to: ['terminal'] }],
        passwords: 'masked',
      }),
    );
    const env = {
      ALERTS_CONFIG: join(dir, 'alerts.config.json'),
      EXPOSURE_API_URL: emu.url,
      EXPOSURE_API_TOKEN: 'emu-acme-token',
      TABLE_NAME: await db.table(),
      DYNAMODB_ENDPOINT: db.endpoint,
    };
    const io = captureIo(env);
    expect(await runCli(['lookup', 'account', REPEAT_VICTIM, hostile.identity_name], io), io.err).toBe(0);
    expect(io.out).toMatch(/^ {2}IDENTITY +SOURCE +LEAKED +PASSWORD/);
    expect(io.out).toContain(REPEAT_VICTIM);
    expect(io.out).not.toContain('\u001b');
    expect(io.out).not.toContain('\u0007');
    expect(io.out).not.toContain(hostile.hash);
    const json = captureIo(env);
    expect(await runCli(['lookup', 'account', REPEAT_VICTIM, '--json'], json)).toBe(0);
    const answer = JSON.parse(json.out) as LookupAnswer;
    expect(answer.identities[0]?.name).toBe(REPEAT_VICTIM);
    const bad = captureIo(env);
    expect(await runCli(['lookup', 'domain', 'not a domain'], bad)).toBe(2);
    expect(bad.err).toContain('"not a domain" is not a domain');
  });

  it('through the API: scope lookup, one kind of query, the answer as the CLI has it', async () => {
    const finder = newToken();
    const other = newToken();
    const base = buildApi(emu);
    const app = createApiApp({
      ...base.deps,
      loadApiClients: async () => ({
        finder: { digest: sha256Hex(finder), scopes: ['lookup'] },
        other: { digest: sha256Hex(other), scopes: ['read'] },
      }),
    });
    const get = (token: string, query: string) =>
      app.request(`/lookup${query}`, { headers: { Authorization: `Bearer ${token}` } });
    expect((await get(other, `?account=${REPEAT_VICTIM}`)).status).toBe(403);
    const res = await get(finder, `?account=${encodeURIComponent(REPEAT_VICTIM)}&account=nobody@x.test`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as LookupAnswer;
    expect(body.identities.map((i) => i.name)).toEqual([REPEAT_VICTIM]);
    expect(body.more).toBe(0);
    for (const [query, message] of [
      ['', /exactly one kind/],
      ['?domain=a.test&keyword=b*', /exactly one kind/],
      ['?domain=a.test&domain=b.test', /give one domain \(got 2\)/],
      ['?keyword=**', /only wildcards/],
      ['?user=x', /unknown parameter "user"/],
    ] as const) {
      const refused = await get(finder, query);
      expect(refused.status, query).toBe(400);
      expect(((await refused.json()) as { error: { message: string } }).error.message).toMatch(message);
    }
  });
});

/**
 * The bearer-token check: the digest cache, its re-read policy (a new client within a minute, a
 * flood of wrong tokens costing at most one read a minute, a removed client gone within the max
 * age), the parsing of the header and of `apiClients`, and the same policy through the app.
 */
import { describe, expect, it } from 'vitest';
import { createApiApp } from '../../lib/api/app.ts';
import {
  ApiClientAuth,
  type ApiClients,
  parseApiClients,
  parseBearer,
  sha256Hex,
} from '../../lib/api/auth.ts';
import { ConfigError } from '../../lib/errors.ts';
import { memoryLogger } from '../../lib/log.ts';
import { MemoryAuditStore } from '../../lib/state/audit.ts';
import { newToken, tableDeps } from './harness.ts';

function fakeClock(start = 1_700_000_000_000) {
  let t = start;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

function source(initial: ApiClients) {
  let clients = { ...initial };
  let reads = 0;
  let failing = false;
  return {
    load: async () => {
      reads += 1;
      if (failing) throw new Error('AccessDeniedException from Secrets Manager');
      return { ...clients };
    },
    set: (next: ApiClients) => {
      clients = { ...next };
    },
    fail: (on: boolean) => {
      failing = on;
    },
    reads: () => reads,
  };
}

describe('ApiClientAuth', () => {
  const alice = newToken();
  const bob = newToken();

  it('names the client of a valid token and refuses others', async () => {
    const auth = new ApiClientAuth({ load: source({ alice: sha256Hex(alice), bob: sha256Hex(bob) }).load });
    expect(await auth.authenticate(alice)).toBe('alice');
    expect(await auth.authenticate(bob)).toBe('bob');
    expect(await auth.authenticate(newToken())).toBeUndefined();
    expect(await auth.authenticate(sha256Hex(alice))).toBeUndefined();
  });

  it('a flood of wrong tokens re-reads the secret at most once a minute', async () => {
    const clock = fakeClock();
    const src = source({ alice: sha256Hex(alice) });
    const auth = new ApiClientAuth({ load: src.load, now: clock.now });
    expect(await auth.authenticate(alice)).toBe('alice');
    expect(src.reads()).toBe(1);
    for (let i = 0; i < 200; i++) {
      expect(await auth.authenticate(newToken())).toBeUndefined();
      clock.advance(250); // 200 tries over 50 s
    }
    expect(src.reads()).toBe(1);
    clock.advance(10_000); // 60 s after the first read
    expect(await auth.authenticate(newToken())).toBeUndefined();
    expect(src.reads()).toBe(2);
    for (let i = 0; i < 50; i++) await auth.authenticate(newToken());
    expect(src.reads()).toBe(2);
  });

  it('concurrent wrong tokens share one read', async () => {
    const clock = fakeClock();
    const src = source({ alice: sha256Hex(alice) });
    const auth = new ApiClientAuth({ load: src.load, now: clock.now });
    await auth.authenticate(alice);
    clock.advance(60_000);
    await Promise.all(Array.from({ length: 20 }, () => auth.authenticate(newToken())));
    expect(src.reads()).toBe(2);
  });

  it('the first requests at once, nothing read yet: they share the one read, and each is answered', async () => {
    const src = source({ alice: sha256Hex(alice) });
    const auth = new ApiClientAuth({ load: src.load, now: fakeClock().now });
    const names = await Promise.all(Array.from({ length: 20 }, () => auth.authenticate(alice)));
    expect(names).toEqual(Array(20).fill('alice'));
    expect(src.reads()).toBe(1);
  });

  it('a client added to the secret is accepted once the re-read interval has passed', async () => {
    const clock = fakeClock();
    const src = source({ alice: sha256Hex(alice) });
    const auth = new ApiClientAuth({ load: src.load, now: clock.now });
    expect(await auth.authenticate(bob)).toBeUndefined(); // first read
    src.set({ alice: sha256Hex(alice), bob: sha256Hex(bob) });
    clock.advance(30_000);
    expect(await auth.authenticate(bob)).toBeUndefined(); // too soon to read again
    expect(src.reads()).toBe(1);
    clock.advance(30_000);
    expect(await auth.authenticate(bob)).toBe('bob');
    expect(src.reads()).toBe(2);
    expect(await auth.authenticate(bob)).toBe('bob');
    expect(src.reads()).toBe(2); // hits need no read
  });

  it('a client removed from the secret is refused once the cache is older than its max age', async () => {
    const clock = fakeClock();
    const src = source({ alice: sha256Hex(alice), bob: sha256Hex(bob) });
    const auth = new ApiClientAuth({ load: src.load, now: clock.now, maxAgeMs: 300_000 });
    expect(await auth.authenticate(bob)).toBe('bob');
    src.set({ alice: sha256Hex(alice) });
    clock.advance(299_000);
    expect(await auth.authenticate(bob)).toBe('bob');
    clock.advance(1_000);
    expect(await auth.authenticate(bob)).toBeUndefined();
    expect(await auth.authenticate(alice)).toBe('alice');
  });

  it('keeps the digests it has when a re-read fails, and logs it', async () => {
    const clock = fakeClock();
    const src = source({ alice: sha256Hex(alice) });
    const logger = memoryLogger();
    const auth = new ApiClientAuth({ load: src.load, now: clock.now, logger });
    await auth.authenticate(alice);
    src.fail(true);
    clock.advance(600_000);
    expect(await auth.authenticate(alice)).toBe('alice');
    expect(await auth.authenticate(newToken())).toBeUndefined();
    expect(src.reads()).toBe(2);
    expect(logger.lines.some((l) => /could not read the API clients/.test(l))).toBe(true);
  });

  it('with nothing cached, a failed read is an error (not a 401 for everyone), retried at most once a minute', async () => {
    const clock = fakeClock();
    const src = source({ alice: sha256Hex(alice) });
    src.fail(true);
    const auth = new ApiClientAuth({ load: src.load, now: clock.now });
    await expect(auth.authenticate(alice)).rejects.toThrow(/AccessDenied/);
    await expect(auth.authenticate(alice)).rejects.toThrow(/could not be read/);
    expect(src.reads()).toBe(1);
    src.fail(false);
    clock.advance(60_000);
    expect(await auth.authenticate(alice)).toBe('alice');
  });

  it('accepts upper-case hex digests', async () => {
    const auth = new ApiClientAuth({ load: source({ alice: sha256Hex(alice).toUpperCase() }).load });
    expect(await auth.authenticate(alice)).toBe('alice');
  });
});

describe('parseApiClients', () => {
  it('accepts a map of names to hex digests, and absence as no client', () => {
    const digest = sha256Hex('x');
    expect(parseApiClients({ runbook: digest })).toEqual({ runbook: digest });
    expect(parseApiClients(undefined)).toEqual({});
  });

  it('refuses a raw token in place of a digest, naming the client and not the value', () => {
    const token = 'plain-text-token-by-mistake';
    let error: unknown;
    try {
      parseApiClients({ runbook: sha256Hex('a'), chatbot: token });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(/apiClients\.chatbot: expected the SHA-256 hex digest/);
    expect((error as Error).message).not.toContain(token);
  });

  it('refuses a non-object and bad names', () => {
    expect(() => parseApiClients(['x'])).toThrow(ConfigError);
    expect(() => parseApiClients('x')).toThrow(ConfigError);
    expect(() => parseApiClients({ 'has space': sha256Hex('a') })).toThrow(/client name/);
  });
});

describe('parseBearer', () => {
  it.each([
    [undefined, 'missing'],
    ['', 'missing'],
    ['Bearer', 'malformed'],
    ['Bearer ', 'malformed'],
    ['Basic abc', 'malformed'],
    ['Bearer a b', 'malformed'],
    ['Bearer a,b', 'malformed'],
    [`Bearer ${'a'.repeat(5000)}`, 'malformed'],
    ['Bearer abc-._~+/=', 'token'],
    ['bearer abc', 'token'],
  ])('%s → %s', (header, kind) => {
    expect(parseBearer(header).kind).toBe(kind);
  });
});

describe('through the app', () => {
  it('a new client works after the re-read interval; wrong tokens never cause more than one read a minute', async () => {
    const clock = fakeClock();
    const alice = newToken();
    const bob = newToken();
    const src = source({ alice: sha256Hex(alice) });
    const app = createApiApp({
      upstream: {
        toggleAsset: async () => {
          throw new Error('not called by this test');
        },
      },
      audit: new MemoryAuditStore(),
      loadApiClients: src.load,
      logger: memoryLogger(),
      now: clock.now,
      ...tableDeps(),
      upstreamTimeoutMs: 1_000,
    });
    const audit = async (token: string) =>
      (await app.request('/assets/1/audit', { headers: { Authorization: `Bearer ${token}` } })).status;

    expect(await audit(alice)).toBe(200);
    src.set({ alice: sha256Hex(alice), bob: sha256Hex(bob) });
    for (let i = 0; i < 100; i++) {
      expect(await audit(newToken())).toBe(401);
      clock.advance(500);
    }
    expect(await audit(bob)).toBe(401); // 50 s later: still within the minute
    expect(src.reads()).toBe(1);
    clock.advance(10_000);
    expect(await audit(bob)).toBe(200);
    expect(src.reads()).toBe(2);
    for (let i = 0; i < 100; i++) expect(await audit(newToken())).toBe(401);
    expect(src.reads()).toBe(2);
  });

  it('when the API clients cannot be read at all, the answer is a JSON 500, not a 401', async () => {
    const app = createApiApp({
      upstream: { toggleAsset: async () => ({ id: 1, is_disabled: true }) },
      audit: new MemoryAuditStore(),
      loadApiClients: async () => {
        throw new Error('secret gone');
      },
      logger: memoryLogger(),
      now: Date.now,
      ...tableDeps(),
      upstreamTimeoutMs: 1_000,
    });
    const res = await app.request('/assets/1/audit', { headers: { Authorization: `Bearer ${newToken()}` } });
    expect(res.status).toBe(500);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('internal_error');
  });
});

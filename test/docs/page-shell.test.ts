/**
 * How the docs' pages take turns beside one npm start (page-shell.ts): which blocks may run beside
 * another page's, and the lock that lets readers share and a writer run alone.
 */
import { describe, expect, it } from 'vitest';
import { changes, Turns } from './page-shell.ts';

describe('a docs block', () => {
  it.each([
    "npm run -s cli -- silences add --match '{}' --until 1h --reason x",
    'npm run -s cli -- silences expire $(npm run -s cli -- silences query -q types=paste)',
    'npm run -s cli -- events ignore "$EVENT"',
    'npm run -s cli -- identity revoke-sessions jane@acme.test',
    'npm run -s cli -- poll events --once',
    'npm run -s cli -- destinations test',
    'npm run cli -- status',
    'npm start',
    `curl -s -X POST -H "Authorization: Bearer $TOKEN" -d '{}' "$API_URL/silences"`,
    'curl -s -X DELETE "$API_URL/silences/$SILENCE"',
  ])('changes what others read: %s', (text) => {
    expect(changes(text)).toBe(true);
  });

  it.each([
    'export API_URL=$(node -p "require(\'./.data/local.json\').api.url")',
    'curl -s -H "Authorization: Bearer $TOKEN" "$API_URL/silences"',
    'npm run -s cli -- status',
    "npm run -s cli -- lookup keyword 'kim.*' --json",
    'npm run -s cli -- identity test corp --login jane@acme.test',
    'npm run -s cli -- config reference | head -1',
    `export EVENT=$(npm run -s cli -- deliveries list --status sent --json | node -p "1")`,
  ])('only reads: %s', (text) => {
    expect(changes(text)).toBe(false);
  });
});

describe('turns', () => {
  /** Holds a turn until `release` is called, logging when it begins and ends. */
  function take(turns: Turns, alone: boolean, log: string[], name: string) {
    let release = () => {};
    const held = turns.hold(alone, async () => {
      log.push(`${name} in`);
      await new Promise<void>((done) => {
        release = done;
      });
      log.push(`${name} out`);
    });
    return { held, release: () => release() };
  }
  const tick = () => new Promise((done) => setImmediate(done));

  it('lets readers share, a writer wait for them and run alone, and later readers wait for the writer', async () => {
    const turns = new Turns();
    const log: string[] = [];
    const a = take(turns, false, log, 'a');
    const b = take(turns, false, log, 'b');
    const w = take(turns, true, log, 'w');
    const c = take(turns, false, log, 'c');
    await tick();
    expect(log).toEqual(['a in', 'b in']);
    a.release();
    b.release();
    await tick();
    expect(log).toEqual(['a in', 'b in', 'a out', 'b out', 'w in']);
    w.release();
    await tick();
    c.release();
    await Promise.all([a.held, b.held, w.held, c.held]);
    expect(log).toEqual(['a in', 'b in', 'a out', 'b out', 'w in', 'w out', 'c in', 'c out']);
  });

  it('frees the turn of a block that failed', async () => {
    const turns = new Turns();
    await expect(turns.hold(true, async () => Promise.reject(new Error('failed')))).rejects.toThrow('failed');
    await expect(turns.hold(true, async () => 'next')).resolves.toBe('next');
  });
});

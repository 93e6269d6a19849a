/**
 * How the docs' pages take turns beside one npm start (page-shell.ts): which blocks may run beside
 * another page's, and the lock that lets readers share, actions run one at a time beside them, and
 * a block that changes silences run alone.
 */
import { describe, expect, it } from 'vitest';
import { changes, Turns, turnOf } from './page-shell.ts';

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

  it.each([
    ["npm run -s cli -- silences add --match '{}' --until 1h --reason x", 'alone'],
    ['npm run -s cli -- silence expire $(npm run -s cli -- silence query -q types=paste)', 'alone'],
    ['npm run -s cli -- silences list', 'alone'],
    ['curl -s -X DELETE "$API_URL/silences/$SILENCE"', 'alone'],
    ['npm run -s cli -- events ignore "$EVENT"', 'act'],
    ['npm run -s cli -- poll events --once', 'act'],
    ['curl -s -X POST -d \'{"is_disabled": true}\' "$API_URL/assets/10011/toggle"', 'act'],
    ['npm run -s cli -- deliveries list --status silenced --limit 5', 'read'],
    ['curl -s -H "Authorization: Bearer $TOKEN" "$API_URL/silences"', 'read'],
  ])('takes its turn by what it changes: %s', (text, turn) => {
    expect(turnOf(text)).toBe(turn);
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

  it('lets an action run beside readers but not beside another action, and a silence block alone', async () => {
    const turns = new Turns();
    const log: string[] = [];
    const act = (name: string) => {
      let release = () => {};
      const held = turns.hold('act', async () => {
        log.push(`${name} in`);
        await new Promise<void>((done) => {
          release = done;
        });
        log.push(`${name} out`);
      });
      return { held, release: () => release() };
    };
    const r = take(turns, false, log, 'r');
    const a1 = act('a1');
    const a2 = act('a2');
    const s = take(turns, true, log, 's');
    await tick();
    expect(log).toEqual(['r in', 'a1 in']);
    a1.release();
    await tick();
    expect(log).toEqual(['r in', 'a1 in', 'a1 out', 'a2 in']);
    r.release();
    a2.release();
    await tick();
    expect(log.slice(-1)).toEqual(['s in']);
    s.release();
    await Promise.all([r.held, a1.held, a2.held, s.held]);
  });

  it('frees the turn of a block that failed', async () => {
    const turns = new Turns();
    await expect(turns.hold(true, async () => Promise.reject(new Error('failed')))).rejects.toThrow('failed');
    await expect(turns.hold(true, async () => 'next')).resolves.toBe('next');
  });
});

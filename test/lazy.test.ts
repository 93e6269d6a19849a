/** Code loaded when first needed (lib/lazy.ts): once for every caller, and a failure that names it. */
import { describe, expect, it } from 'vitest';
import { LoadError, lazily } from '../lib/lazy.ts';

describe('lazily', () => {
  it('loads once, however many ask at once or later', async () => {
    let loads = 0;
    const load = lazily('a module', async () => {
      loads += 1;
      return { value: 42 };
    });
    const [a, b] = await Promise.all([load(), load()]);
    const c = await load();
    expect(loads).toBe(1);
    expect(a).toBe(b);
    expect(c).toBe(a);
  });

  it('a failure to load names what could not be loaded, and the next call tries again', async () => {
    let loads = 0;
    const load = lazily("the delivery pass's send path (deliver/sending.ts)", async () => {
      loads += 1;
      if (loads === 1) throw new Error('Cannot find module ./chunk-X.mjs');
      return 'loaded';
    });
    const error = await load().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LoadError);
    expect((error as LoadError).code).toBe('load');
    expect((error as LoadError).message).toBe(
      "could not load the delivery pass's send path (deliver/sending.ts): Cannot find module ./chunk-X.mjs",
    );
    expect(await load()).toBe('loaded');
    expect(loads).toBe(2);
  });
});

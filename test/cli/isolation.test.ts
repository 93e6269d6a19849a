/**
 * The tests run the product as a newcomer's checkout would never let them: whatever the checkout's
 * folder holds (`alerts.config.json` after the deploy guide's `cp`, `.data/` after `npm start`)
 * and whatever the caller's shell exports, a test sees only what it gives. In this process (the
 * setup file test/helpers/isolate.ts) and in every CLI process a test starts (cli-process.ts).
 */
import { readdirSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../infra/alerts-config.ts';
import { runCliProcess } from '../helpers/cli-process.ts';

const VALID = { destinations: { local: { type: 'console' } }, routes: [{ name: 'all', to: ['local'] }] };

afterEach(() => {
  delete process.env.ALERTS_CONFIG;
  delete process.env.LOG_LEVEL;
});

describe('a test file', () => {
  it('starts in an empty folder of its own, not the checkout', () => {
    expect(process.cwd()).not.toBe(PROJECT_ROOT);
    expect(readdirSync(process.cwd())).toEqual([]);
  });

  it('does not inherit the product variables of the shell that ran the tests', () => {
    const inherited = Object.keys(process.env).filter((name) =>
      /^(ALERTS_CONFIG|TABLE_NAME|DYNAMODB_ENDPOINT|PORT|LOG_LEVEL|SECRETS_FILE|(EXPOSURE|SLACK|AWS)_.*)$/.test(
        name,
      ),
    );
    // The AWS SDK's own switch is set by the test helpers themselves, not inherited.
    expect(inherited.filter((name) => name !== 'AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED')).toEqual(
      [],
    );
  });
});

describe('a CLI process a test starts', () => {
  it("runs in a folder of its own: the test's folder (or the checkout's) alerts.config.json and .data/ are not its", async () => {
    await writeFile('alerts.config.json', JSON.stringify(VALID));
    await mkdir('.data');
    const r = await runCliProcess(['config', 'validate']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/^exposure-alerts: no config to validate/);
    expect(r.err).not.toMatch(/npm start/);
  });

  it("gets the test's variables and the basics, never the caller's ALERTS_CONFIG or LOG_LEVEL", async () => {
    const file = `${process.cwd()}/caller.json`;
    await writeFile(file, JSON.stringify(VALID));
    process.env.ALERTS_CONFIG = file; // as if exported in the shell that ran npm test
    process.env.LOG_LEVEL = 'debug';
    const r = await runCliProcess(['config', 'validate']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/^exposure-alerts: no config to validate/);
    // Given by the test, it is used.
    const given = await runCliProcess(['config', 'validate'], { env: { ALERTS_CONFIG: file } });
    expect(given.code, given.err).toBe(0);
    expect(given.out).toMatch(/^config OK/);
  });
});

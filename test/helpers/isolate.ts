/**
 * Every test file starts in an empty folder of its own, with none of the product's variables from
 * the caller's environment (a setup file: vitest.config.ts `setupFiles`).
 *
 * The product reads its folder and its environment: `alerts.config.json` and `.data/` (a stopped
 * or running `npm start`) in the current folder, ALERTS_CONFIG, TABLE_NAME, EXPOSURE_*, LOG_LEVEL
 * and the rest from `process.env`. A test that runs it in this process (`runCli`, a Lambda
 * handler, the runtime) would otherwise read the checkout's (where a newcomer following the README
 * has both) or the shell's, and pass or fail with them. A test that needs a file or a variable
 * gives it; a file of the checkout is found from `import.meta.dirname`, never from the cwd.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

/** The variables the product (or the AWS SDK under it) reads; never inherited by a test. */
export const PRODUCT_VARIABLE =
  /^(ALERTS_CONFIG|API_AUTH|COLUMNS|DYNAMODB_ENDPOINT|IDENTITY_SECRET_ID|LOG_LEVEL|NO_COLOR|PORT|SECRET_ID|SECRETS_FILE|STREAM_QUEUE_URL|TABLE_NAME|WORK_QUEUE_URL|(AWS|EXPOSURE|SLACK)_.*)$/;

/** Kept: vitest.config.ts's switch that keeps the AWS SDK's Node.js 22 notice out of the tests. */
const KEPT = new Set(['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED']);

for (const name of Object.keys(process.env))
  if (PRODUCT_VARIABLE.test(name) && !KEPT.has(name)) delete process.env[name];

const home = process.cwd();
const dir = mkdtempSync(join(tmpdir(), 'ea-test-'));
process.chdir(dir);

afterAll(() => {
  process.chdir(home);
  rmSync(dir, { recursive: true, force: true });
});

/**
 * Before any test: the installed command (dist/exposure-alerts.mjs) built from the sources as they
 * are, so the tests that run it as a process test this code, not an older build.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

export default function setup(): void {
  execFileSync(process.execPath, [join(import.meta.dirname, '..', 'lib', 'cli', 'build.mjs')], {
    stdio: 'inherit',
  });
}

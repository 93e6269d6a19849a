/**
 * The checkout's (or the installed package's) root: the nearest folder above this module that
 * holds package.json. The same from the TypeScript sources and from the bundled CLI
 * (`dist/exposure-alerts.mjs`), so files shipped with the package are found from either.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let found: string | undefined;

export function projectRoot(): string {
  if (found) return found;
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const up = dirname(dir);
    if (up === dir) throw new Error('package.json not found above the exposure-alerts code');
    dir = up;
  }
  found = dir;
  return dir;
}

/** A file of the package, by its path from the root: `projectFile('infra/alerts.config.example.json')`. */
export function projectFile(path: string): string {
  return join(projectRoot(), path);
}

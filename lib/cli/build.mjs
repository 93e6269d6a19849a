#!/usr/bin/env node
// Builds the installed `exposure-alerts` command: the CLI bundled into one JavaScript file,
// dist/exposure-alerts.mjs, which Node runs as it is (no TypeScript loader, no transform at each
// start). Its dependencies stay in node_modules. `npm ci` runs it (the `prepare` script), and so do
// `npm start` and `npm run cli` first, so they always run the sources as they are now. Each file
// is written whole and renamed into place: a build beside a running command never leaves it half.
import { chmodSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const outfile = join(root, 'dist', 'exposure-alerts.mjs');

const result = await build({
  entryPoints: [join(root, 'lib', 'cli', 'main.ts')],
  outfile,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  // Every package from node_modules at run time, as the sources import them.
  packages: 'external',
  sourcemap: true,
  banner: { js: '#!/usr/bin/env node' },
  logLevel: 'warning',
  write: false,
});
mkdirSync(dirname(outfile), { recursive: true });
// The map first: the bundle names it, and is the file a command runs.
for (const file of [...result.outputFiles].sort((a) => (a.path.endsWith('.map') ? -1 : 1))) {
  const temporary = `${file.path}.${process.pid}.tmp`;
  writeFileSync(temporary, file.contents);
  if (file.path === outfile) chmodSync(temporary, 0o755);
  renameSync(temporary, file.path);
}

#!/usr/bin/env node
// What `npm start` and `npm run cli` run: the installed command (dist/exposure-alerts.mjs), built
// first when a file it is built from changed since the last build (build.mjs), in this one process:
// a second Node process for the check would cost as much as the check saves. The arguments are the
// command's, as they would be for dist/exposure-alerts.mjs.
import { buildCli } from './build.mjs';

await buildCli();
await import('../../dist/exposure-alerts.mjs');

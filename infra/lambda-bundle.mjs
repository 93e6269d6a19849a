// How every Lambda function of the stack is bundled (infra/function.ts builds each function with
// these options, once, in the synth's process; the bench and the synth test use them too): minified
// ESM for Node 22+, the AWS SDK v3 left to the runtime, source maps without their sources, and code
// splitting, so what a function may never run (the renderer of a destination kind its config
// lacks, the follow-ups, the notices) sits in chunks of its own, loaded only when first used.
// `index.mjs` is the handler; `chunk-*.mjs` beside it.
import { fileURLToPath } from 'node:url';

/**
 * What a function may load at its start, in KiB: `index.mjs` and the chunks it imports statically,
 * minified, without the AWS SDK (the runtime's). What only some configs or some invocations use
 * loads when first needed, so each later feature pays for its own bytes within this budget
 * (test/infra/synth.test.ts checks it at every run; the bench's coldstart section reports it).
 */
export const START_BUDGET_KB = 170;

/** Some bundled CommonJS dependencies call `require`; ESM output has none, so each file defines one. */
export const REQUIRE_BANNER =
  "import { createRequire as __alertsCreateRequire } from 'node:module'; const require = __alertsCreateRequire(import.meta.url);";

/** The esbuild options of a function's bundle: `entry` to `outdir/index.mjs` and its chunks. */
export function lambdaBuildOptions(entry, outdir) {
  return {
    entryPoints: { index: entry },
    outdir,
    // Paths resolve from this repository, never from the caller's folder.
    absWorkingDir: fileURLToPath(new URL('..', import.meta.url)),
    bundle: true,
    splitting: true,
    platform: 'node',
    format: 'esm',
    target: 'node22',
    mainFields: ['module', 'main'],
    outExtension: { '.js': '.mjs' },
    chunkNames: 'chunk-[hash]',
    banner: { js: REQUIRE_BANNER },
    minify: true,
    sourcemap: true,
    sourcesContent: false,
    // The runtime provides the AWS SDK v3; bundling it would triple the size and cold start.
    external: ['@aws-sdk/*'],
    logLevel: 'warning',
  };
}

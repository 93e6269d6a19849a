/**
 * Bundles an entry the way the stack bundles our Lambda functions: with infra/lambda-bundle.mjs's
 * options, which infra/function.ts bundles each function with at synth, so the bench follows any
 * change there.
 */
import { statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { type BuildOptions, build } from 'esbuild';
// @ts-expect-error a plain JavaScript module of the stack, shared with infra/function.ts's build step
import { lambdaBuildOptions } from '../../infra/lambda-bundle.mjs';

/** The options infra/lambda-bundle.mjs gives every Lambda bundle (the stack's synth bundles with them). */
export function lambdaOptions(entry: string, outdir: string): BuildOptions {
  return lambdaBuildOptions(entry, outdir) as BuildOptions;
}

/**
 * Bundles `entry` to `outfile` as one file with the Lambda settings (the bench's own worker: a
 * process, not a function), a source map beside it; returns its size in bytes.
 */
export async function bundleLikeLambda(entry: string, outfile: string): Promise<number> {
  const {
    outdir: _dir,
    entryPoints: _entries,
    splitting: _split,
    chunkNames: _chunks,
    outExtension: _ext,
    ...rest
  } = lambdaOptions(entry, dirname(outfile));
  await build({ ...rest, entryPoints: [entry], outfile });
  return statSync(outfile).size;
}

/**
 * Bundles a function's `entry` into `outdir` as the stack does (split into `index.mjs` and chunks);
 * returns what it loads at start: `index.mjs` and the chunks it imports statically.
 */
export async function bundleFunction(
  entry: string,
  outdir: string,
): Promise<{ index: string; bytes: number }> {
  const result = await build({ ...lambdaOptions(entry, outdir), metafile: true });
  const outputs = result.metafile?.outputs ?? {};
  const index = Object.keys(outputs).find((k) => k.endsWith('/index.mjs')) ?? '';
  const seen = new Set([index]);
  for (const file of seen)
    for (const i of outputs[file]?.imports ?? [])
      if (i.kind === 'import-statement' && !i.external) seen.add(i.path);
  return {
    index: join(outdir, 'index.mjs'),
    bytes: [...seen].reduce((n, f) => n + (outputs[f]?.bytes ?? 0), 0),
  };
}

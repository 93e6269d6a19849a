/**
 * Bundles an entry the way the CDK bundles our Lambda functions (infra/function.ts: NodejsFunction
 * with the local esbuild). The settings are read from infra/function.ts itself, so the bench follows
 * any change there, and it fails loudly when it can no longer read them.
 */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { type BuildOptions, build } from 'esbuild';
import { ROOT } from './procs.ts';

export interface LambdaBundling {
  target: string;
  banner: string;
  external: string[];
  mainFields: string[];
  minify: boolean;
  sourcesContent: boolean;
}

function read(source: string, pattern: RegExp, what: string): string {
  const match = pattern.exec(source);
  if (!match?.[1]) throw new Error(`cannot read ${what} from infra/function.ts; update test/bench/bundle.ts`);
  return match[1];
}

const list = (text: string) => [...text.matchAll(/'([^']+)'/g)].map((m) => m[1] as string);

/** The bundling settings of infra/function.ts. */
export function lambdaBundling(): LambdaBundling {
  const source = readFileSync(join(ROOT, 'infra/function.ts'), 'utf8');
  const bundling = read(source, /bundling:\s*\{([\s\S]*?)\n\s{6}\},/, 'the bundling block');
  if (!/format:\s*OutputFormat\.ESM/.test(bundling))
    throw new Error('infra/function.ts no longer bundles ESM');
  return {
    target: read(bundling, /target:\s*'([^']+)'/, 'target'),
    banner: read(source, /const REQUIRE_BANNER =\s*"([^"]+)";/, 'REQUIRE_BANNER'),
    external: list(read(bundling, /externalModules:\s*\[([^\]]*)\]/, 'externalModules')),
    mainFields: list(read(bundling, /mainFields:\s*\[([^\]]*)\]/, 'mainFields')),
    minify: read(bundling, /minify:\s*(true|false)/, 'minify') === 'true',
    sourcesContent: read(bundling, /sourcesContent:\s*(true|false)/, 'sourcesContent') === 'true',
  };
}

/** Bundles `entry` to `outfile` (ESM, with a source map beside it); returns the bundle's size in bytes. */
export async function bundleLikeLambda(entry: string, outfile: string): Promise<number> {
  const settings = lambdaBundling();
  const options: BuildOptions = {
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: settings.target,
    mainFields: settings.mainFields,
    banner: { js: settings.banner },
    minify: settings.minify,
    sourcemap: true,
    sourcesContent: settings.sourcesContent,
    external: settings.external,
    logLevel: 'warning',
  };
  await build(options);
  return statSync(outfile).size;
}

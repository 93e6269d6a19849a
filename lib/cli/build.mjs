#!/usr/bin/env node
// Builds the installed `exposure-alerts` command: the CLI bundled into JavaScript that Node runs as
// it is (no TypeScript loader, no transform at each start). dist/exposure-alerts.mjs is the entry;
// the code only some commands need sits in chunks beside it (dist/*-HASH.mjs), loaded when such a
// command runs (commands/index.ts), so `--help` or `config validate` does not parse and run the
// code of `start`. Its dependencies stay in node_modules, but zod and the DynamoDB SDK
// ({@link bundledPackages}).
//
// `npm ci` runs it with --force (the `prepare` script). `npm start` and `npm run cli` run it first
// (dev.mjs), and so does the tests' global setup: without --force it builds only when a file the
// last build was made from differs from what it was then (dist/exposure-alerts.build.json records
// each one's size and modification time, and which files the build wrote): a file changed, deleted
// or checked out with another time, a missing output, a record it cannot read, all make it build.
// The check is a stat of each file, before esbuild is even loaded. A bundled package's files are
// not recorded one by one (the SDK's are hundreds, a stat each at every command's start):
// package-lock.json stands for them, as `npm ci` changes them.
//
// Each file is written whole and renamed into place, the chunks before the entry that imports
// them: a build beside a running command never leaves it half. The chunks of the build before are
// kept, for a command started before this build that loads one of them later; older ones go.
import { chmodSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const dist = join(root, 'dist');
const entry = join(dist, 'exposure-alerts.mjs');
const RECORD = 'dist/exposure-alerts.build.json';
// What changes a build besides the sources it bundles (the metafile names those).
const BESIDES = ['package.json', 'package-lock.json', 'tsconfig.json', 'lib/cli/build.mjs'];
const RECORD_VERSION = 2;

/** What the DynamoDB SDK's ES modules import: bundled with it. */
const SDK_FILES =
  /[\\/]node_modules[\\/](@aws-sdk|@smithy|@aws-crypto|@aws|tslib|mnemonist|obliterator)[\\/]/;

/**
 * Every package stays in node_modules, loaded at run time as the sources import it, but zod and
 * the DynamoDB SDK. Zod's ES modules are some ninety files, which Node finds, reads and links one by
 * one at each start of a command that checks anything; bundled, they are a chunk, and only the
 * parts used. The SDK (state/sdk.ts) is some thirty CommonJS files that every command using the
 * table loads whole: bundled from its ES modules, only what the commands send, in the chunks of
 * those commands, it costs such a command some 10% less CPU (status 339 -> 300 ms, a poll 690 ->
 * 620, a lookup 680 -> 600; --version the same) for some 780 KB more in dist/. The Lambdas load it
 * as sdk.ts says, from the runtime's own copy. Secrets Manager and SQS, which sources load with
 * `require`, stay in node_modules.
 */
const bundledPackages = {
  name: 'packages',
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, ({ path, importer }) =>
      /^zod(\/|$)/.test(path) || path === '@aws-sdk/client-dynamodb' || SDK_FILES.test(importer)
        ? undefined
        : { external: true },
    );
    // sdk.ts takes the SDK with `require`, which a bundler cannot follow: here it takes the same
    // names from the SDK's ES modules. A sdk.ts of another shape is bundled as it is.
    build.onLoad({ filter: /[\\/]lib[\\/]state[\\/]sdk\.ts$/ }, ({ path }) => {
      const text = readFileSync(path, 'utf8');
      const names = /export const \{([^}]*)\} = sdk;/.exec(text)?.[1];
      if (!names || !/export const DynamoDBClient = sdk\.DynamoDBClient;/.test(text)) return undefined;
      const list = [...names.split(',').map((n) => n.trim()), 'DynamoDBClient'].filter(Boolean);
      return {
        contents: `export { ${list.join(', ')} } from '@aws-sdk/client-dynamodb';\nexport type DynamoDBClient = import('@aws-sdk/client-dynamodb').DynamoDBClient;\n`,
        loader: 'ts',
        resolveDir: dirname(path),
      };
    });
  },
};

/** A file as the record keeps it: size and modification time, or '' when it is not there. */
function stamp(file, at = root) {
  try {
    const s = statSync(join(at, file));
    return `${s.size}:${s.mtimeMs}`;
  } catch {
    return '';
  }
}

function readRecord(at = root) {
  try {
    const record = JSON.parse(readFileSync(join(at, RECORD), 'utf8'));
    return record.version === RECORD_VERSION ? record : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether the last build in the checkout `at` still stands: every file it was made from, and
 * every file it wrote, as they were then.
 */
export function upToDate(at = root) {
  const record = readRecord(at);
  if (!record) return false;
  for (const [file, seen] of Object.entries(record.inputs)) if (stamp(file, at) !== seen) return false;
  for (const [file, seen] of Object.entries(record.outputs)) if (stamp(file, at) !== seen) return false;
  return true;
}

/** Builds the command: always with `force`, else only when the last build no longer stands. */
export async function buildCli({ force = false } = {}) {
  if (!force && upToDate()) return false;
  const started = Date.now();
  const { build } = await import('esbuild');
  const result = await build({
    absWorkingDir: root,
    entryPoints: { 'exposure-alerts': join(root, 'lib', 'cli', 'main.ts') },
    outdir: dist,
    outExtension: { '.js': '.mjs' },
    entryNames: '[name]',
    chunkNames: '[name]-[hash]',
    splitting: true,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    // The ES modules of a package that has both (the SDK's): what a bundle can leave out of them.
    mainFields: ['module', 'main'],
    plugins: [bundledPackages],
    sourcemap: true,
    banner: { js: '#!/usr/bin/env node' },
    logLevel: 'warning',
    metafile: true,
    write: false,
  });
  mkdirSync(dist, { recursive: true });
  // Maps first, the entry last: the entry is the file a command runs, and it imports the chunks.
  const rank = (path) => (path.endsWith('.map') ? 0 : path === entry ? 2 : 1);
  for (const file of [...result.outputFiles].sort((a, b) => rank(a.path) - rank(b.path))) {
    const temporary = `${file.path}.${process.pid}.tmp`;
    writeFileSync(temporary, file.contents);
    if (file.path === entry) chmodSync(temporary, 0o755);
    renameSync(temporary, file.path);
  }
  const written = result.outputFiles.map((f) => relative(root, f.path));
  const inputs = [
    ...Object.keys(result.metafile.inputs).filter((file) => !file.startsWith('node_modules/')),
    ...BESIDES,
  ];
  for (const old of recordBuild(inputs, written, started)) rmSync(join(root, old), { force: true });
  return true;
}

/**
 * Records a build made from `inputs` that wrote `outputs` (paths from `at`), begun at `started`,
 * and returns the files of older builds to delete (all but the build before this one's).
 */
export function recordBuild(inputs, outputs, started, at = root) {
  const before = readRecord(at);
  const kept = new Set([...outputs, ...Object.keys(before?.outputs ?? {})]);
  // A file changed while the build read it may be in the bundle as it was: recorded so that the
  // next run builds again. A time in whole seconds may be a file system's that keeps no finer.
  const settled = (file) => {
    const s = stamp(file, at);
    const time = Number(s.split(':')[1] ?? 0);
    return time > started - (time % 1000 === 0 ? 2_000 : 100) ? 'changed during the build' : s;
  };
  const record = {
    version: RECORD_VERSION,
    inputs: Object.fromEntries(inputs.map((file) => [file, settled(file)])),
    outputs: Object.fromEntries(outputs.map((file) => [file, stamp(file, at)])),
    previous: [...kept],
  };
  const file = join(at, RECORD);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(`${file}.${process.pid}.tmp`, `${JSON.stringify(record, null, 1)}\n`);
  renameSync(`${file}.${process.pid}.tmp`, file);
  return (before?.previous ?? []).filter((old) => !kept.has(old));
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await buildCli({ force: process.argv.includes('--force') });
}

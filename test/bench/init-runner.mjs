/**
 * Cold start of one Lambda bundle, in this fresh Node process: imports the bundle (which builds its
 * runtime with top-level await, as on Lambda) and prints, as one JSON line, the time from process
 * start (`performance.timeOrigin`) to the end of that import, and the import alone. Given a package
 * name instead (`@aws-sdk/client-dynamodb`), it times importing just that package.
 *
 * `node [--enable-source-maps] test/bench/init-runner.mjs <bundle.mjs | package>`
 */
import { pathToFileURL } from 'node:url';

const started = performance.now();
const bundle = process.argv[2];
if (!bundle) {
  process.stderr.write('usage: init-runner.mjs <bundle.mjs | package>\n');
  process.exit(2);
}
const isPackage = bundle.startsWith('@');
const module = await import(isPackage ? bundle : pathToFileURL(bundle).href);
const ready = performance.now();
if (!isPackage && typeof module.handler !== 'function') {
  process.stderr.write(`${bundle} exports no handler function\n`);
  process.exit(1);
}
process.stdout.write(
  `BENCH_INIT ${JSON.stringify({ sinceProcessStartMs: ready, importMs: ready - started })}\n`,
);
// The runtime holds keep-alive sockets and timers; the measurement is done.
process.exit(0);

/**
 * Headless Chromium for the console's tests, from the npm registry alone: @sparticuz/chromium packs
 * the browser inside its npm package and puppeteer-core drives it, so `npm ci && npm test` needs
 * nothing else on a fresh machine.
 *
 * The package unpacks the browser into the temp folder on first use, and a second process that
 * finds the folder half-written would launch a broken binary; test files run in parallel. So it is
 * unpacked once, by a child process into a folder of its own, then renamed into place (a rename is
 * atomic): whoever renames first wins, and the others use theirs.
 *
 * The package's flags suit AWS Lambda; the ones that switch web security off (the same-origin
 * policy, mixed content) are dropped, since these tests check what the page's CSP allows, and so is
 * `--single-process`, which a desktop Chromium does not need. So are the ones that emulate a GPU
 * in software (SwiftShader, in the browser's own process): with `--disable-gpu` Chromium paints
 * with its plain software rasterizer instead, for half the CPU on these two-core machines (what
 * the tests look at, layout, computed styles and the DOM, does not depend on it).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import chromium from '@sparticuz/chromium';
import puppeteer, { type Browser } from 'puppeteer-core';

const PACKAGE_DIR = resolve(import.meta.dirname, '../../node_modules/@sparticuz/chromium');
const PACKAGE = join(PACKAGE_DIR, 'build/esm/index.js');
/** The unpacked browser's folder is named by the package's version, read from the package itself. */
const VERSION = (JSON.parse(readFileSync(join(PACKAGE_DIR, 'package.json'), 'utf8')) as { version: string })
  .version;
const DROPPED = new Set([
  '--single-process',
  '--disable-web-security',
  '--allow-running-insecure-content',
  '--disable-site-isolation-trials',
  '--in-process-gpu',
  '--use-gl=angle',
  '--use-angle=swiftshader',
  '--enable-unsafe-swiftshader',
  '--ignore-gpu-blocklist',
]);

/** The unpacked browser's path, unpacking it first if no process did yet. */
export function chromiumPath(): string {
  const shared = join(tmpdir(), `exposure-alerts-chromium-${VERSION}`);
  const binary = join(shared, 'chromium');
  if (existsSync(binary)) return binary;
  const own = mkdtempSync(join(tmpdir(), 'ea-chromium-'));
  const script = `const { default: c } = await import(${JSON.stringify(pathToFileURL(PACKAGE).href)}); console.log(await c.executablePath());`;
  execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    env: { ...process.env, TMPDIR: own },
    stdio: ['ignore', 'ignore', 'inherit'],
    timeout: 60_000,
  });
  try {
    renameSync(own, shared);
  } catch {
    // Another process renamed its copy first: use that one.
    rmSync(own, { recursive: true, force: true });
  }
  if (!existsSync(binary)) throw new Error(`Chromium did not unpack to ${binary}`);
  return binary;
}

const VIEWPORT = { width: 1280, height: 800 };

export async function launchBrowser(): Promise<Browser> {
  return puppeteer.launch({
    executablePath: chromiumPath(),
    args: [...chromium.args.filter((a) => !DROPPED.has(a)), '--disable-gpu'],
    headless: true,
    defaultViewport: VIEWPORT,
  });
}

/** A browser for one run, and how to let it go when the run ends. */
export interface BrowserLease {
  browser: Browser;
  /** Closes a browser of the run's own; leaves a shared one running for the others. */
  release(): Promise<void>;
}

/** A Chromium of the run's own (the screenshots script's). */
export async function ownBrowser(): Promise<BrowserLease> {
  const browser = await launchBrowser();
  return { browser, release: () => browser.close() };
}

/**
 * The test run's one Chromium, shared by every browser test file in every worker: the tests'
 * global setup (test/global-setup.ts) serves its address at `brokerUrl` and launches it when first
 * asked. The run keeps its pages apart by a browser context of their own (a test's own cookies
 * and storage); it disconnects at its end, and the global setup closes the browser after the
 * last file.
 */
export async function sharedBrowser(brokerUrl: string): Promise<BrowserLease> {
  const res = await fetch(brokerUrl);
  const answer = await res.text();
  if (!res.ok) throw new Error(`the shared browser did not start: ${answer}`);
  const browser = await puppeteer.connect({ browserWSEndpoint: answer, defaultViewport: VIEWPORT });
  return { browser, release: async () => browser.disconnect() };
}

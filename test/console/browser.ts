/**
 * Headless Chromium for the console's tests, from the npm registry alone: @sparticuz/chromium packs
 * the browser inside its npm package and puppeteer-core drives it, so `npm ci && npm test` needs
 * nothing else on a fresh machine (environment.md).
 *
 * The package unpacks the browser into the temp folder on first use, and a second process that
 * finds the folder half-written would launch a broken binary; test files run in parallel. So it is
 * unpacked once, by a child process into a folder of its own, then renamed into place (a rename is
 * atomic): whoever renames first wins, and the others use theirs.
 *
 * The package's flags suit AWS Lambda; the ones that switch web security off (the same-origin
 * policy, mixed content) are dropped, since these tests check what the page's CSP allows, and so is
 * `--single-process`, which a desktop Chromium does not need.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import chromium from '@sparticuz/chromium';
import puppeteer, { type Browser } from 'puppeteer-core';

const PACKAGE = resolve(import.meta.dirname, '../../node_modules/@sparticuz/chromium/build/index.js');
const VERSION = '153.0.0';
const DROPPED = new Set([
  '--single-process',
  '--disable-web-security',
  '--allow-running-insecure-content',
  '--disable-site-isolation-trials',
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

export async function launchBrowser(): Promise<Browser> {
  return puppeteer.launch({
    executablePath: chromiumPath(),
    args: chromium.args.filter((a) => !DROPPED.has(a)),
    headless: true,
    defaultViewport: { width: 1280, height: 800 },
  });
}

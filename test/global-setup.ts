/**
 * Once before any test (vitest runs a global setup for each project and for the root; the first
 * call does the work, the others find it done):
 *
 * - the installed command (dist/exposure-alerts.mjs) built from the sources as they are, so the
 *   tests that run it as a process test this code, not an older build (build.mjs builds only when
 *   a file it is built from changed since its last build);
 * - the browser tests' one Chromium (console/browser.ts `sharedBrowser`): a server on 127.0.0.1
 *   whose one answer is the browser's WebSocket address, launching it at the first request, so a
 *   run without browser tests starts none. Its address reaches the tests as `inject('browserBroker')`.
 */
import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Browser } from 'puppeteer-core';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The address that answers with the shared browser's WebSocket address (console/browser.ts). */
    browserBroker: string;
  }
}

/** Marks the work done for the process, across the projects' separate module graphs. */
const DONE = Symbol.for('exposure-alerts.tests.global-setup');

export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  const state = globalThis as { [DONE]?: true };
  if (state[DONE]) return undefined;
  state[DONE] = true;
  execFileSync(process.execPath, [join(import.meta.dirname, '..', 'lib', 'cli', 'build.mjs')], {
    stdio: 'inherit',
  });
  const broker = await startBrowserBroker();
  project.vitest.provide('browserBroker', broker.url);
  return broker.close;
}

async function startBrowserBroker(): Promise<{ url: string; close(): Promise<void> }> {
  let launched: Promise<Browser> | undefined;
  const server = createServer((_req, res) => {
    // Puppeteer and the browser's package are loaded only by a run that asks for the browser.
    launched ??= import('./console/browser.ts').then((m) => m.launchBrowser());
    launched.then(
      (browser) => res.end(browser.wsEndpoint()),
      (error: unknown) => {
        res.statusCode = 500;
        res.end(String(error));
      },
    );
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    close: async () => {
      server.closeAllConnections();
      await new Promise((done) => server.close(done));
      await (await launched?.catch(() => undefined))?.close();
    },
  };
}

/**
 * `npm run screenshots`: every view of the console at 1280×800 and on a 390×844 phone, written to
 * docs/console/ (docs/console.md shows them). It starts the same local run as the browser tests
 * (harness.ts: the emulator, dynalite, a poll and a delivery pass, serve, headless Chromium),
 * makes a little history through the API as an analyst would (a silence, an ignored event), and
 * photographs each view once it has loaded. Photographs are slow and say nothing a test could
 * check, so they are taken here and never in `npm test` (issue 48).
 *
 *   npm run screenshots
 */
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { type ConsoleRun, startConsoleRun } from './harness.ts';
import { settled } from './in-page.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const OUT = join(ROOT, 'docs', 'console');
const SIZES = [
  { width: 1280, height: 800 },
  { width: 390, height: 844 },
] as const;

async function api(run: ConsoleRun, method: string, path: string, body?: unknown): Promise<unknown> {
  const res = await fetch(`${run.url}${path}`, {
    method,
    headers: {
      Authorization: `Bearer ${run.tokens.analyst}`,
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res.json();
}

async function main(): Promise<void> {
  mkdirSync(OUT, { recursive: true });
  const run = await startConsoleRun();
  try {
    await api(run, 'POST', '/silences', {
      match: { kind: 'event', types: ['paste'] },
      until: '7d',
      reason: 'paste noise while the takedown runs',
    });
    const events = (await api(run, 'GET', '/alerts?kind=event')) as { items: { key: string }[] };
    const quiet = events.items.find((e) => e.key !== run.hostileUid);
    if (quiet)
      await api(run, 'POST', '/events/actions', { action: 'ignore', uids: [quiet.key], reason: 'known' });
    const credentials = (await api(run, 'GET', '/alerts?kind=credential')) as {
      items: { key: string; identity?: { verdict: string } }[];
    };
    const atRisk = credentials.items.find((c) => c.identity?.verdict === 'at_risk') ?? credentials.items[0];

    const views: [name: string, hash: string | undefined][] = [
      ['sign-in', undefined],
      ['alerts', '#/alerts'],
      ['alert', `#/alerts/${encodeURIComponent(atRisk?.key ?? run.hostileUid)}`],
      ['silences', '#/silences'],
      ['destinations', '#/destinations'],
      ['streams', '#/streams'],
      ['audit', '#/audit'],
    ];
    for (const size of SIZES) {
      const signedIn = await run.open(run.tokens.analyst, size);
      const signedOut = await run.open(undefined, size);
      for (const [name, hash] of views) {
        const page = hash ? signedIn.page : signedOut.page;
        if (hash) {
          await page.goto(`${run.url}/console${hash}`);
          await settled(page);
        } else {
          await page.waitForSelector('input[name=token]');
        }
        // Screenshots without a caret blinking in a field or a focus ring on the heading.
        await page.evaluate('document.activeElement?.blur()');
        const path = join(OUT, `${name}-${size.width}x${size.height}.png`) as `${string}.png`;
        await page.screenshot({ path });
        console.log(`wrote ${path.slice(ROOT.length + 1)}`);
      }
      await signedIn.close();
      await signedOut.close();
    }
    // One in the dark, as a system set to dark shows it.
    const dark = await run.open(run.tokens.analyst);
    await dark.page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: 'dark' }]);
    await dark.page.goto(`${run.url}/console#/alerts`);
    await settled(dark.page);
    await dark.page.evaluate('document.activeElement?.blur()');
    await dark.page.screenshot({ path: join(OUT, 'alerts-dark-1280x800.png') as `${string}.png` });
    console.log('wrote docs/console/alerts-dark-1280x800.png');
    await dark.close();
  } finally {
    await run.close();
  }
}

await main();
// dynalite and the stand-ins' sockets may keep the loop alive a moment longer than needed.
process.exit(0);

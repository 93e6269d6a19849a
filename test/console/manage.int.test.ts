/**
 * The console's other views in a real browser, against `serve` (harness.ts) after a real poll and
 * delivery pass: Silences (made through the form after its count, then expired), Destinations (a
 * test message the stand-in receives once, a second within the minute refused in words, the dead
 * re-queued), Streams and Audit; and every view at 1280×800 and on a 390-wide phone, in light and
 * dark, without sideways scrolling and with every control labelled.
 */
import type { Page } from 'puppeteer-core';
import { describe, expect, it } from 'vitest';
import { useConsoleRun } from './harness.ts';
import { button, inPage, navigate, settled, texts } from './in-page.ts';

const run = useConsoleRun();

async function confirm(page: Page, says: RegExp, name: string): Promise<void> {
  const dialog = await page.waitForSelector('dialog[open]');
  expect(await dialog?.evaluate((d) => d.textContent)).toMatch(says);
  await page.locator(`dialog[open] ${button(name)}`).click();
  await page.waitForSelector('dialog[open]', { hidden: true });
}

async function view(page: Page, name: string): Promise<void> {
  await page.goto(`${run.url}/console#/${name}`);
  await settled(page);
}

/** The notice a change leaves at the top of its view, once it starts with `starts`. */
const notice = async (page: Page, starts: string) => {
  await page.waitForFunction(
    `document.querySelector('.notice')?.textContent?.startsWith(${JSON.stringify(starts)})`,
    { timeout: 5_000 },
  );
  return (await texts(page, '.notice'))[0] ?? '';
};

describe('Silences', () => {
  it('made through the form, counted first; expired from the list, and kept in the record', async () => {
    const { page } = await run.tab(run.tokens.analyst, 'silences');
    await page.select('select[name=kind]', 'event');
    await page.locator('::-p-aria(Event types)').fill('ransomleak, paste');
    await page.locator('::-p-aria(Until)').fill('2h');
    await page.locator('::-p-aria(Reason)').fill('takedown under way <b>bold</b>');
    expect(await page.$eval('#match-preview', (e) => e.textContent)).toBe(
      '{"kind":"event","types":["ransomleak","paste"]}',
    );
    await page.locator(button('Create silence…')).click();
    // One ransomleak event among the recent alerts.
    await confirm(page, /It would have held 1 of \d+ recent alerts\./, 'Create the silence');
    const made = await notice(page, 'Created ');
    const id = /Created (s-[^,]+),/.exec(made)?.[1] as string;
    expect(id).toBeDefined();
    await settled(page);
    const listed = await page.$$eval('.results tbody tr', (trs) => trs.map((tr) => tr.textContent ?? ''));
    expect(listed.filter((t) => t.includes(id))).toHaveLength(1);
    expect(listed.find((t) => t.includes(id))).toContain('takedown under way <b>bold</b>');

    await page.locator(button(`Expire ${id}`)).click();
    await confirm(page, /"types":\["ransomleak","paste"\]/, 'Expire it');
    expect(await notice(page, 'Expired ')).toBe(`Expired ${id}.`);
    await settled(page);
    expect((await texts(page, '.results tbody tr')).some((t) => t.includes(id))).toBe(false);
    await navigate(page, () => page.locator('::-p-aria(Show expired ones too)').click());
    const kept = (await texts(page, '.results tbody tr')).find((t) => t.includes(id));
    expect(kept).toContain('by analyst');
  });
});

describe('Destinations', () => {
  it('a test message reaches the destination once; another within the minute is refused in words', async () => {
    const { page } = await run.tab(run.tokens.analyst, 'destinations');
    const before = run.hook.requests.length;
    await page.locator(button('Send a test message to siem')).click();
    await confirm(page, /A PagerDuty destination pages whoever is on call/, 'Send the test');
    await page.waitForFunction(
      `document.querySelector('.said')?.textContent?.startsWith('Test message to siem: ')`,
    );
    expect((await texts(page, '.said'))[0]).toMatch(/^Test message to siem: sent/);
    expect(run.hook.requests.length).toBe(before + 1);

    await page.locator(button('Send a test message to siem')).click();
    await confirm(page, /Send a test message to siem\?/, 'Send the test');
    await page.waitForFunction(`document.querySelector('.said [role=alert]')`);
    expect((await texts(page, '.said [role=alert]'))[0]).toMatch(
      /^Test message to siem: .*Try again in \d+ s\.$/,
    );
    expect(run.hook.requests.length).toBe(before + 1);
  });

  it('re-queues the dead of a destination, after saying how many', async () => {
    const { page } = await run.tab(run.tokens.analyst, 'destinations');
    const dead = await page.$$eval('.results tbody tr', (trs) =>
      trs.map((tr) => [...tr.querySelectorAll('td')].slice(0, 3).map((td) => td.textContent)),
    );
    const archive = dead.find((r) => r[0] === 'archive');
    expect(Number(archive?.[2])).toBeGreaterThan(0);
    await page.locator(button('Re-queue the dead deliveries of archive')).click();
    await confirm(page, new RegExp(`${archive?.[2]} dead: each goes again`), 'Re-queue them');
    expect(await notice(page, 'archive: ')).toBe(`archive: re-queued ${archive?.[2]}, left 0 alone.`);
    await settled(page);
    const after = await page.$$eval('.results tbody tr', (trs) =>
      trs.map((tr) => [...tr.querySelectorAll('td')].slice(0, 3).map((td) => td.textContent)),
    );
    expect(after.find((r) => r[0] === 'archive')).toEqual(['archive', archive?.[2], '0']);
  });
});

describe('Streams and Audit', () => {
  it('Streams: each stream’s lag and last result, the quota, the identity providers', async () => {
    const { page } = await run.tab(run.tokens.reader, 'streams');
    const streams = await page.$$eval('.results table:first-of-type tbody tr', (trs) =>
      trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)),
    );
    expect(streams.map((s) => s[0]).sort()).toEqual(['credentials:acme.test', 'tenant']);
    expect(streams.every((s) => s[4] === 'done')).toBe(true);
    expect(await page.$eval('dl.summary', (d) => d.textContent)).toMatch(/Search quota/);
    expect(await texts(page, 'caption')).toContain('Identity providers');
  });

  it('Audit: the latest entries, newest first, naming who acted', async () => {
    const { page } = await run.tab(run.tokens.reader, 'audit');
    const rows = await page.$$eval('.results tbody tr', (trs) =>
      trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent ?? '')),
    );
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.some((r) => r[1] === 'analyst')).toBe(true);
    const times = await page.$$eval('.results tbody td[data-label=When] time', (ts) =>
      ts.map((t) => t.getAttribute('datetime') ?? ''),
    );
    expect(times).toEqual([...times].sort().reverse());
  });
});

describe('every view, on a screen and a phone, light and dark', () => {
  const VIEWS = ['alerts', 'silences', 'destinations', 'streams', 'audit'];

  it('nothing wider than the screen; every control labelled; dark when the system is', async () => {
    const { page, errors } = await run.tab(run.tokens.analyst);
    const backgrounds = new Set<string>();
    // Each view is loaded once and looked at in each size and scheme: the page lays itself out by
    // CSS alone (no script reads the width or the scheme), so a resize shows what a phone loads.
    for (const name of [...VIEWS, `alerts/${encodeURIComponent(run.hostileUid)}`]) {
      await view(page, name);
      const unlabelled = await inPage<string[]>(
        page,
        `[...document.querySelectorAll('input, select, textarea, button')].filter((c) => !(c.labels?.length || c.getAttribute('aria-label') || (c.tagName === 'BUTTON' && c.textContent.trim()))).map((c) => c.outerHTML.slice(0, 80))`,
      );
      expect(unlabelled, name).toEqual([]);
      for (const scheme of ['light', 'dark'] as const) {
        await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: scheme }]);
        for (const viewport of [
          { width: 1280, height: 800 },
          { width: 390, height: 844 },
        ]) {
          await page.setViewport(viewport);
          const wide = await inPage<{ scroll: number; client: number }>(
            page,
            '({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth })',
          );
          expect(wide.scroll, `${name} at ${viewport.width} (${scheme})`).toBeLessThanOrEqual(wide.client);
          backgrounds.add(await inPage<string>(page, 'getComputedStyle(document.body).backgroundColor'));
        }
      }
    }
    expect(backgrounds.size).toBe(2);
    expect(errors).toEqual([]);
  });
});

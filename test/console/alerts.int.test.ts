/**
 * The console's Alerts in a real browser, against `serve` (harness.ts) after a real poll and
 * delivery pass: the list, its filters, one alert's detail, acting on it (the upstream emulator
 * sees the action once), an account action on a credential with a verdict, `Silence similar`, and
 * the hostile samples (`<script>`, `<img onerror>`, `<!channel>` in upstream text) shown as text
 * that runs nothing.
 */
import type { Page } from 'puppeteer-core';
import { describe, expect, it } from 'vitest';
import { HOSTILE, PWNED, useConsoleRun } from './harness.ts';
import { button, inPage, navigate, settled, texts } from './in-page.ts';

const run = useConsoleRun();

/** The rows of the alerts table, each as its cells' text by column. */
async function rows(page: Page): Promise<Record<string, string>[]> {
  await settled(page);
  return page.$$eval('.results table tbody tr', (trs) =>
    trs.map((tr) =>
      Object.fromEntries(
        [...tr.querySelectorAll('td')].map((td) => [
          td.getAttribute('data-label') ?? '',
          td.textContent ?? '',
        ]),
      ),
    ),
  );
}

/** Opens the confirmation dialog's confirming button, after checking what it says. */
async function confirm(page: Page, says: RegExp, name: string): Promise<string> {
  const dialog = await page.waitForSelector('dialog[open]');
  const words = (await dialog?.evaluate((d) => d.textContent)) ?? '';
  expect(words).toMatch(says);
  await page.locator(`dialog[open] ${button(name)}`).click();
  await page.waitForSelector('dialog[open]', { hidden: true });
  return words;
}

describe('Alerts', () => {
  it('lists every alert with its kind, severity, title, verdict and each destination’s state; the hostile text is text', async () => {
    const { page, dialogs, errors } = await run.tab(run.tokens.analyst);
    const list = await rows(page);
    // Seven events (one hostile) and the two acme.test credentials, each sent to siem, dead at archive.
    expect(list.filter((r) => r.Kind === 'event')).toHaveLength(7);
    expect(list.filter((r) => r.Kind === 'credential').length).toBeGreaterThan(0);
    for (const row of list) expect(row.Deliveries).toBe('siem sentarchive dead');
    expect(list.filter((r) => r.Kind === 'credential').map((r) => r.Identity)).toContain('at risk · corp');
    const hostile = list.find((r) => r['Title or login']?.includes('<script>'));
    expect(hostile?.['Title or login']).toContain(HOSTILE.script);
    expect(hostile?.['Title or login']).toContain(HOSTILE.img);
    // Nothing ran: no image element, no script added, no global, no dialog.
    expect(await page.$$('main img')).toHaveLength(0);
    expect(await page.$$('main script')).toHaveLength(0);
    expect(await inPage(page, `typeof window.${PWNED}`)).toBe('undefined');
    expect(dialogs).toEqual([]);
    expect(errors).toEqual([]);
  });

  it('filters by kind, state and text from the form, in the address', async () => {
    const { page } = await run.tab(run.tokens.analyst);
    await page.select('select[name=kind]', 'credential');
    await navigate(page, () => page.locator(button('Apply filters')).click());
    expect(await inPage(page, 'location.hash')).toBe('#/alerts?kind=credential');
    const credentials = await rows(page);
    expect(credentials.length).toBeGreaterThan(0);
    expect(credentials.every((r) => r.Kind === 'credential')).toBe(true);

    await page.goto(`${run.url}/console#/alerts?kind=event&q=ransomleak`);
    const found = await rows(page);
    expect(found.map((r) => r['Title or login'])).toEqual(['ransomleak for Acme Corp']);
    expect(await page.$eval('select[name=kind]', (s) => (s as unknown as { value: string }).value)).toBe(
      'event',
    );

    await page.goto(`${run.url}/console#/alerts?state=silenced`);
    expect(await rows(page)).toEqual([]);
    expect(await texts(page, '.results [role=status]')).toEqual(['No alerts match these filters.']);

    await page.goto(`${run.url}/console#/alerts?severity=nonsense`);
    await page.waitForSelector('.results [role=alert]');
    expect((await texts(page, '.results [role=alert]'))[0]).toMatch(/severity must be one of/);
  });

  it('an alert’s detail: deliveries with attempts and errors, the trail, and the item as JSON text', async () => {
    const { page, dialogs } = await run.tab(
      run.tokens.analyst,
      `alerts/${encodeURIComponent(run.hostileUid)}`,
    );
    await page.waitForSelector('pre.json');
    expect(await page.$eval('#view-title', (h) => h.textContent)).toBe(
      `financial_data ${run.hostileUid}`.replace(
        'financial_data',
        (await page.$eval('#view-title', (h) => h.textContent ?? '')).split(' ')[0] ?? '',
      ),
    );
    const json = await page.$eval('pre.json', (p) => p.textContent ?? '');
    const item = JSON.parse(json);
    expect(item.metadata.uid).toBe(run.hostileUid);
    expect(json).toContain(HOSTILE.channel);
    expect(json).toContain(JSON.stringify(HOSTILE.script).slice(1, -1));
    const deliveries = await page.$$eval('section[aria-labelledby=deliveries-title] tbody tr', (trs) =>
      trs.map((tr) => [...tr.querySelectorAll('td')].slice(0, 4).map((td) => td.textContent)),
    );
    expect(deliveries.sort()).toEqual([
      ['archive', 'dead', '1', 'HTTP 410 gone'],
      ['siem', 'sent', '1', '—'],
    ]);
    expect(await texts(page, 'section[aria-labelledby=audit-title] tbody td[data-label=What]')).toContain(
      'recorded',
    );
    expect(await page.$$('main img')).toHaveLength(0);
    expect(await inPage(page, `typeof window.${PWNED}`)).toBe('undefined');
    expect(dialogs).toEqual([]);
  });

  it('Ignore, confirmed first: the emulator sees one action; the detail then offers its undo and lists it', async () => {
    const { page } = await run.tab(run.tokens.analyst, `alerts/${encodeURIComponent(run.hostileUid)}`);
    const event = run.emulator.emulator.dataset
      .tenant('acme')
      .events.find((e) => e.item.metadata.uid === run.hostileUid);
    const actions = () =>
      run.emulator.emulator.control.requests.filter((r) => r.endpoint === 'eventActions' && r.status < 300);
    const before = actions().length;
    await page.locator('::-p-aria(Reason (optional, kept in the audit trail))').fill('noise <b>here</b>');
    await page.locator(`main ${button('Ignore')}`).click();
    // Cancel first: nothing is sent.
    await page.waitForSelector('dialog[open]');
    await page.keyboard.press('Escape');
    await page.waitForSelector('dialog[open]', { hidden: true });
    expect(actions().length).toBe(before);
    await page.locator(`main ${button('Ignore')}`).click();
    await confirm(page, /marked ignored at the upstream/, 'Ignore');
    await page.waitForSelector('.notice');
    expect(await texts(page, '.notice')).toEqual([`Ignored: ${run.hostileUid}.`]);
    expect(actions().length).toBe(before + 1);
    expect(actions().at(-1)?.input).toMatchObject({
      action: { type: 'ignore' },
      targets: [{ uid: run.hostileUid }],
    });
    expect(event?.isIgnored).toBe(true);
    expect(await page.$(`main ${button('Undo ignore')}`)).not.toBeNull();
    const acted = await page.$$eval('section[aria-labelledby=actions-title] tbody tr', (trs) =>
      trs.map((tr) => [...tr.querySelectorAll('td')].slice(1).map((td) => td.textContent)),
    );
    expect(acted).toEqual([['ignore', 'analyst', 'ok']]);
  });

  it('Silence similar: counted first, then made for the event’s type and identifiers', async () => {
    const { page } = await run.tab(run.tokens.analyst, `alerts/${encodeURIComponent(run.hostileUid)}`);
    await page.select('select[name=similar-for]', 'P1D');
    await page.locator(button('Silence similar…')).click();
    const said = await confirm(page, /It would have held \d+ of \d+ recent alerts\./, 'Create the silence');
    expect(said).toContain('naming identifiers');
    await page.waitForSelector('.notice');
    const notice = (await texts(page, '.notice'))[0] ?? '';
    expect(notice).toMatch(/^Silenced until .* \(s-[^)]+\)\.$/);
    const silences = (await (
      await fetch(`${run.url}/silences`, { headers: { Authorization: `Bearer ${run.tokens.reader}` } })
    ).json()) as { items: { id: string; match: unknown; createdBy: string }[] };
    const made = silences.items.find((s) => notice.includes(s.id));
    expect(made?.createdBy).toBe('analyst');
    expect(made?.match).toMatchObject({ kind: 'event', identifiers: [expect.any(Number), 9_001] });
  });

  it('an account action on a credential with a verdict: confirmed, then taken once by the provider', async () => {
    const { page } = await run.tab(run.tokens.analyst, 'alerts?kind=credential');
    const atRisk = (await rows(page)).find((r) => r.Identity === 'at risk · corp');
    const login = atRisk?.['Title or login'] as string;
    await navigate(page, () => page.locator(`.results ::-p-aria(${login})`).click());
    expect(await texts(page, 'select[name=account-action] option')).toEqual([
      'Revoke sessions',
      'Require a password change',
      'Confirm compromised',
      'Disable the account',
      'Enable the account',
    ]);
    const taken = () =>
      run.emulator.emulator.identity.control.actions.filter(
        (a) => a.login.toLowerCase() === login.toLowerCase(),
      );
    expect(taken()).toEqual([]);
    await page.locator(button('Act on the account…')).click();
    await confirm(page, new RegExp(`Account: ${login.replace('.', '\\.')}`), 'Revoke sessions');
    await page.waitForSelector('.notice');
    expect((await texts(page, '.notice'))[0]).toBe(`Revoke sessions: done for ${login}.`);
    expect(taken().map((a) => a.action)).toEqual(['revokeSessions']);
  });

  it('a read token sees the detail without any way to act', async () => {
    const { page } = await run.tab(run.tokens.reader, `alerts/${encodeURIComponent(run.hostileUid)}`);
    await page.waitForSelector('pre.json');
    expect(await page.$('section.act')).toBeNull();
    expect(await texts(page, 'main button')).toEqual([]);
  });
});

/**
 * Terminal injection: text the CLI did not write (upstream fields, stored delivery records, a
 * destination's reply) reaches the terminal with its control characters shown as escapes, never
 * raw. Through the real CLI against a real emulator, dynalite and HTTP receiver.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../lib/cli/run.ts';
import { terminalSafe } from '../../lib/cli/terminal.ts';
import { systemClock } from '../../lib/clock.ts';
import { type DeliveryRecord, DeliveryRecords, deliveryId } from '../../lib/state/records/index.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { captureIo } from '../helpers/io.ts';
import { type Receiver, startReceiver } from '../helpers/receiver.ts';

// Retitle the window, clear the screen, an 8-bit CSI, a right-to-left override, a CR that would
// let the rest overwrite the line, and a newline that would start a forged line.
const EVIL = '\u001b]0;owned\u0007\u001b[2J\u009b31m\u202eevil\rok\nexposure-alerts: all fine';

// Written out here rather than imported, so the test does not share the implementation's list.
// `\n` and `\t` are allowed: the CLI's own output has line breaks.
const RAW_CONTROL =
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

function expectNoRawControls(...texts: string[]) {
  for (const text of texts) {
    const found = RAW_CONTROL.exec(text);
    expect(
      found,
      found ? `raw U+${found[0].charCodeAt(0).toString(16)} in ${JSON.stringify(text)}` : '',
    ).toBe(null);
  }
}

describe('terminalSafe', () => {
  it('shows every control, DEL and bidi control as a visible escape', () => {
    expect(terminalSafe('a\u001b[2Jb')).toBe('a\\u001b[2Jb');
    expect(terminalSafe('\u0000\u0007\u007f\u0085\u009b')).toBe('\\u0000\\u0007\\u007f\\u0085\\u009b');
    expect(terminalSafe('\u061c\u200e\u200f\u202a\u202e\u2066\u2069\u2028')).toBe(
      '\\u061c\\u200e\\u200f\\u202a\\u202e\\u2066\\u2069\\u2028',
    );
    expect(terminalSafe('line\r\nnext\tcol')).toBe('line\\u000d\\u000anext\\u0009col');
  });

  it('leaves ordinary text alone, non-ASCII included', () => {
    const text = 'jane.doe@exämple.com 東京 🙂 <mark>x</mark> \\u001b (typed, not a control)';
    expect(terminalSafe(text)).toBe(text);
  });

  it('multiline keeps line breaks and tabs, and still escapes CR and ESC', () => {
    expect(terminalSafe('a\n\tb\r\u001bc', { multiline: true })).toBe('a\n\tb\\u000d\\u001bc');
  });

  it('keeps JSON valid and equal to what it was (JSON.stringify leaves DEL, C1 and bidi raw)', () => {
    const value = { id: EVIL, nested: [`\u007f\u0085\u202e\u2066${EVIL}`], n: 1 };
    const raw = JSON.stringify(value, null, 2);
    expect(RAW_CONTROL.test(raw)).toBe(true); // why the CLI's JSON goes through terminalSafe too
    const safe = terminalSafe(raw, { multiline: true });
    expectNoRawControls(safe);
    expect(JSON.parse(safe)).toEqual(value);
  });
});

const emu = useEmulator();
const dynamo = useDynalite();
let table: string;

beforeAll(async () => {
  table = await dynamo.table();
});

afterEach(() => {
  emu.running.emulator.control.clearFaults();
});

function env(extra: Record<string, string> = {}) {
  return {
    EXPOSURE_API_URL: emu.url,
    EXPOSURE_API_TOKEN: 'emu-acme-token',
    DYNAMODB_ENDPOINT: dynamo.endpoint,
    TABLE_NAME: table,
    LOG_LEVEL: 'error',
    ...extra,
  };
}

async function cli(argv: string[], extra: Record<string, string> = {}) {
  const io = captureIo(env(extra));
  const code = await runCli(argv, io);
  return { code, out: io.out, err: io.err };
}

describe('deliveries list', () => {
  const key = `forum_post/darkforum/${EVIL}`;
  const record: DeliveryRecord = {
    // `terminal` is the built-in demo config's destination, so `--status dead` queries it.
    id: deliveryId('terminal', 'event', key),
    destination: 'terminal',
    kind: 'event',
    key,
    source: 'tenant',
    status: 'dead',
    attempts: 3,
    lastError: `HTTP 400 ${EVIL}`,
    routes: ['everything'],
    item: { metadata: { uid: key } },
    createdAt: '2026-11-20T10:00:00.000Z',
    updatedAt: '2026-11-20T10:00:00.000Z',
    note: `silenced: ${EVIL}`,
  };

  beforeAll(async () => {
    await new DeliveryRecords(dynamo.client, table, systemClock).queue.save([record]);
  });

  it.each([[[]], [['--status', 'dead']]])(
    'shows the id, last error and note with their controls escaped, one line per record (%j)',
    async (args) => {
      // Wide enough for every cell whole: at 80 columns the table cuts them with `…`.
      const r = await cli(['deliveries', 'list', ...args], { COLUMNS: '1000' });
      expect(r.code).toBe(0);
      expectNoRawControls(r.out, r.err);
      const lines = r.out.trimEnd().split('\n');
      expect(lines).toHaveLength(2); // the header, and one row: the newline inside the id forged none
      expect(lines[1]).toContain('terminal~event~forum_post/darkforum/\\u001b]0;owned\\u0007\\u001b[2J');
      expect(lines[1]).toContain('\\u009b31m\\u202eevil\\u000dok\\u000aexposure-alerts: all fine');
      expect(lines[1]).toMatch(/ dead +3 +.* last error: HTTP 400 \\u001b\]0;owned/);
      expect(lines[1]).toContain('note: silenced: \\u001b]0;owned');
    },
  );

  it('--json is still JSON, with the exact stored values', async () => {
    const r = await cli(['deliveries', 'list', '--json']);
    expect(r.code).toBe(0);
    expectNoRawControls(r.out, r.err);
    expect(JSON.parse(r.out)).toMatchObject([
      { id: record.id, lastError: record.lastError, note: record.note },
    ]);
  });
});

describe('upstream text', () => {
  it('token test: the e-mail and scopes', async () => {
    const tenant = emu.running.emulator.dataset.tenant('acme') as { userEmail: string };
    const original = tenant.userEmail;
    tenant.userEmail = `${EVIL}@acme.test`;
    try {
      const text = await cli(['token', 'test']);
      expect(text.code).toBe(0);
      expectNoRawControls(text.out, text.err);
      expect(text.out).toContain('(\\u001b]0;owned\\u0007');
      const json = await cli(['token', 'test', '--json']);
      expectNoRawControls(json.out, json.err);
      expect(JSON.parse(json.out).user_email).toBe(`${EVIL}@acme.test`);
    } finally {
      tenant.userEmail = original;
    }
  });

  it("the one-line failure: the upstream's error message", async () => {
    emu.running.emulator.control.addFault({
      endpoint: 'tokenTest',
      status: 400,
      body: { error: { message: EVIL } },
    });
    const r = await cli(['token', 'test']);
    expect(r.code).toBe(1);
    expectNoRawControls(r.out, r.err);
    expect(r.err).toMatch(/^exposure-alerts: .*\\u001b\]0;owned\\u0007/m);
  });

  it('poll summary and its failure line: a stream error quoting the upstream', async () => {
    emu.running.emulator.control.addFault({
      endpoint: 'tenantEvents',
      status: 400,
      body: { error: { message: EVIL } },
    });
    const r = await cli(['poll', 'events', '--once', '--max-seconds', '20']);
    expectNoRawControls(r.out, r.err);
    expect(r.out).toMatch(/tenant: failed.*\\u001b\]0;owned/);
    expect(r.err).toMatch(/^exposure-alerts: tenant: .*\\u202eevil/m);
  });

  it('assets toggle: the asset as the upstream returns it', async () => {
    const assets = emu.running.emulator.dataset.tenant('acme').assets;
    const [id, asset] = [...assets.entries()][0] as [number, Record<string, unknown>];
    const name = asset.name;
    asset.name = EVIL;
    try {
      const r = await cli(['assets', 'toggle', String(id), '--disable', '--json']);
      expect(r.code).toBe(0);
      expectNoRawControls(r.out, r.err);
      expect(JSON.parse(r.out)).toMatchObject({ id, name: EVIL, is_disabled: true });
      // The one-line summary quotes the name too: escaped, on one line.
      const line = await cli(['assets', 'toggle', String(id), '--enable']);
      expect(line.code).toBe(0);
      expectNoRawControls(line.out, line.err);
      expect(line.out.split('\n')).toHaveLength(2);
    } finally {
      asset.name = name;
    }
  });
});

describe('files and destinations', () => {
  let dir: string;
  let receiver: Receiver;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ea-terminal-'));
    receiver = await startReceiver({ status: 400, body: `bad request ${EVIL}` });
  });
  afterAll(async () => {
    await receiver.close();
  });

  async function configFile(destinations: Record<string, unknown>) {
    const path = join(dir, `config-${Object.keys(destinations).join('-')}.json`);
    await writeFile(
      path,
      JSON.stringify({
        sources: { tenantEvents: { enabled: true } },
        destinations,
        routes: [{ name: 'all', match: {}, to: Object.keys(destinations) }],
      }),
    );
    return path;
  }

  it("destinations test: the destination's reply", async () => {
    const config = await configFile({ hook: { type: 'webhook', url: `${receiver.url}/in` } });
    const r = await cli(['destinations', 'test'], { ALERTS_CONFIG: config });
    expect(r.code).toBe(1);
    expectNoRawControls(r.out, r.err);
    expect(r.out).toMatch(/hook \(webhook\): FAILED, HTTP 400 bad request \\u001b\]0;owned/);
  });

  it('preview: the item in each payload, and its uid in the header line', async () => {
    const config = await configFile({
      siem: { type: 'webhook', url: 'https://siem.example.com/in' },
      soc: { type: 'slack', url: 'https://hooks.slack.example/x' },
    });
    // The upstream schema refuses a uid with a line break (CR, LF); every other control gets through.
    const uid = `forum_post/darkforum/${EVIL.replace(/[\r\n]/g, ' ')}`;
    const item = join(dir, 'event.json');
    await writeFile(
      item,
      JSON.stringify({
        metadata: {
          estimated_created_at: '2026-11-20T10:00:00Z',
          matched_at: '2026-11-20T10:05:00Z',
          type: 'forum_post',
          uid,
          severity: 'high',
        },
        highlights: { content: [`selling <mark>acme.test</mark> ${EVIL}`] },
      }),
    );
    const r = await cli(['preview', item], { ALERTS_CONFIG: config });
    expect(r.code, r.err).toBe(0);
    expectNoRawControls(r.out, r.err);
    expect(r.out.split('\n')[0]).toContain('event forum_post/darkforum/\\u001b]0;owned');
    // The webhook body is still readable JSON after the escapes, carrying the exact item.
    const body = r.out.slice(r.out.indexOf('{\n  "version"'), r.out.indexOf('\n}\n') + 2);
    expect(JSON.parse(body).items[0].metadata.uid).toBe(uid);
  });
});

/**
 * A Splunk HTTP Event Collector stand-in for tests: a real local HTTP server that reads the body as
 * HEC does (JSON objects one after another, not an array), checks `Authorization: Splunk <token>`
 * and each event's `time` and `event`, refuses a body over 1 MB (413), and answers with HEC's codes
 * (`{"text": "Success", "code": 0}`; 401/403 codes 2 to 4; 400 codes 5 and 6; 503 code 9). It
 * keeps every event; answers can be scripted.
 */
import { standIn } from './stand-in.ts';

export const HEC_TOKEN = 'hec-token-for-tests';

export interface HecStandIn {
  url: string;
  events: { time: number; event: Record<string, unknown>; sourcetype?: string; index?: string }[];
  requests: { bytes: number; status: number }[];
  script(...answers: { status: number; body?: unknown }[]): void;
  close(): Promise<void>;
}

/** Concatenated JSON objects, as HEC reads them; undefined when the text is not that. */
export function splitObjects(text: string): unknown[] | undefined {
  const out: unknown[] = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === '{') {
      if (depth++ === 0) start = i;
    } else if (c === '}') {
      if (--depth === 0) {
        try {
          out.push(JSON.parse(text.slice(start, i + 1)));
        } catch {
          return undefined;
        }
      }
    } else if (depth === 0 && !/\s/.test(c ?? '')) return undefined;
  }
  return depth === 0 ? out : undefined;
}

export async function startHec(): Promise<HecStandIn> {
  const queue: { status: number; body?: unknown }[] = [];
  const stand: HecStandIn = {
    url: '',
    events: [],
    requests: [],
    script: (...answers) => queue.push(...answers),
    close: () => server.close(),
  };
  const server = await standIn((req, _body, res, raw) => {
    const send = (status: number, body: unknown) => {
      stand.requests.push({ bytes: raw.length, status });
      res.writeHead(status, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.method !== 'POST' || req.url !== '/services/collector/event')
      return send(404, { text: 'Not found', code: 404 });
    if (!req.headers.authorization) return send(401, { text: 'Token is required', code: 2 });
    if (req.headers.authorization !== `Splunk ${HEC_TOKEN}`)
      return send(403, { text: 'Invalid token', code: 4 });
    const scripted = queue.shift();
    if (scripted) return send(scripted.status, scripted.body ?? {});
    if (raw.length > 1_000_000) return send(413, { text: 'Content too large', code: 27 });
    const objects = splitObjects(raw.toString('utf8'));
    if (!objects || objects.length === 0) return send(400, { text: 'No data', code: 5 });
    for (const o of objects) {
      const e = o as { time?: unknown; event?: unknown };
      if (typeof e.time !== 'number' || !e.event || typeof e.event !== 'object')
        return send(400, { text: 'Invalid data format', code: 6 });
    }
    stand.events.push(...(objects as HecStandIn['events']));
    return send(200, { text: 'Success', code: 0 });
  });
  stand.url = server.url;
  return stand;
}

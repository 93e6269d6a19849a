/**
 * A ServiceNow stand-in (Table API) for tests: a real local HTTP server that checks Basic auth and
 * the incident fields as ServiceNow limits them (`short_description` at most 160 characters,
 * urgency and impact 1 to 3), answers 201 `{"result": {sys_id, number}}`, finds an incident by its
 * `correlation_id` (`sysparm_query`), and keeps `work_notes`. Answers can be scripted.
 */
import { standIn } from './stand-in.ts';

export const SN_USER = 'exposure.alerts';
export const SN_PASSWORD = 'servicenow-password-for-tests';

export interface Incident {
  sys_id: string;
  number: string;
  fields: Record<string, unknown>;
  workNotes: string[];
}

export interface ServiceNowStandIn {
  url: string;
  incidents: Incident[];
  calls: { method: string; path: string; status: number }[];
  script(...answers: { status: number; body?: unknown }[]): void;
  close(): Promise<void>;
}

export async function startServiceNow(): Promise<ServiceNowStandIn> {
  const queue: { status: number; body?: unknown }[] = [];
  const auth = `Basic ${Buffer.from(`${SN_USER}:${SN_PASSWORD}`).toString('base64')}`;
  const stand: ServiceNowStandIn = {
    url: '',
    incidents: [],
    calls: [],
    script: (...answers) => queue.push(...answers),
    close: () => server.close(),
  };
  const server = await standIn((req, raw, res) => {
    const url = new URL(req.url ?? '/', 'http://sn.test');
    const send = (status: number, body?: unknown) => {
      stand.calls.push({ method: req.method ?? '', path: url.pathname, status });
      res.writeHead(status, { 'Content-Type': 'application/json' });
      res.end(body === undefined ? '' : JSON.stringify(body));
    };
    if (req.headers.authorization !== auth)
      return send(401, {
        error: { message: 'User Not Authenticated', detail: 'Required to provide Auth information' },
      });
    const scripted = queue.shift();
    if (scripted) return send(scripted.status, scripted.body ?? {});
    const body = raw ? (JSON.parse(raw) as Record<string, unknown>) : {};
    if (req.method === 'POST' && url.pathname === '/api/now/table/incident') {
      const sd = body.short_description;
      if (typeof sd !== 'string' || sd.length === 0 || sd.length > 160 || /[\r\n]/.test(sd))
        return send(400, {
          error: { message: 'Invalid short_description', detail: 'one line, 1 to 160 characters' },
        });
      for (const f of ['urgency', 'impact'])
        if (!['1', '2', '3'].includes(String(body[f])))
          return send(400, { error: { message: `Invalid ${f}`, detail: '1, 2 or 3' } });
      const n = stand.incidents.length + 1;
      const incident = {
        sys_id: `sys${String(n).padStart(29, '0')}`,
        number: `INC${String(n).padStart(7, '0')}`,
        fields: body,
        workNotes: [],
      };
      stand.incidents.push(incident);
      return send(201, { result: { sys_id: incident.sys_id, number: incident.number, ...body } });
    }
    if (req.method === 'GET' && url.pathname === '/api/now/table/incident') {
      const query = url.searchParams.get('sysparm_query') ?? '';
      const id = /^correlation_id=(.+)$/.exec(query)?.[1];
      if (!id) return send(400, { error: { message: 'Invalid query' } });
      const found = stand.incidents.filter((i) => i.fields.correlation_id === id);
      return send(200, { result: found.slice(0, 1).map((i) => ({ sys_id: i.sys_id, number: i.number })) });
    }
    const one = /^\/api\/now\/table\/incident\/([^/]+)$/.exec(url.pathname);
    if (req.method === 'PATCH' && one) {
      const incident = stand.incidents.find((i) => i.sys_id === one[1]);
      if (!incident) return send(404, { error: { message: 'No Record found' } });
      if (typeof body.work_notes === 'string') incident.workNotes.push(body.work_notes);
      return send(200, { result: { sys_id: incident.sys_id } });
    }
    return send(404, { error: { message: `no route ${req.method} ${url.pathname}` } });
  });
  stand.url = server.url;
  return stand;
}

/**
 * A Jira Cloud stand-in (REST v3) for tests: a real local HTTP server that checks what Jira checks
 * (Basic auth; `project`, `issuetype`, a one-line summary of at most 255 characters, labels without
 * spaces, an ADF description whose text sits only in text nodes with known marks) and answers as
 * Jira does (201 `{id, key, self}`, 400 `{errorMessages, errors}`, 401). Its JQL label search is
 * eventually consistent, as Jira's is: an issue is found only `indexDelayMs` after its create.
 * Comments and transitions are kept per issue; answers can be scripted.
 */
import { standIn } from './stand-in.ts';

export const JIRA_EMAIL = 'alerts@acme.test';
export const JIRA_TOKEN = 'jira-api-token-for-tests';

export interface JiraIssue {
  key: string;
  summary: string;
  labels: string[];
  description: unknown;
  createdAt: number;
  comments: unknown[];
  status: string;
}

/**
 * A scripted answer to the next request. With `applied`, the request is carried out first, as Jira
 * would (an issue created behind a 5xx or a timeout), and this answer sent in place of Jira's.
 */
export type JiraScript = { status: number; body?: unknown; retryAfter?: number; applied?: boolean };

export interface JiraStandIn {
  url: string;
  issues: JiraIssue[];
  /** Requests by method and path, in order. */
  calls: { method: string; path: string; status: number }[];
  /** How long a created issue stays out of the search (Jira's index lag). */
  indexDelayMs: number;
  script(...answers: JiraScript[]): void;
  close(): Promise<void>;
}

const MARKS = new Set(['strong', 'em', 'code', 'link']);
const NODES = new Set(['doc', 'paragraph', 'text', 'heading', 'bulletList', 'listItem', 'hardBreak', 'rule']);

/** What is wrong with an ADF document, as Jira would refuse it; undefined when it is fine. */
export function adfProblem(doc: unknown): string | undefined {
  const d = doc as { type?: unknown; version?: unknown; content?: unknown };
  if (d?.type !== 'doc' || d.version !== 1 || !Array.isArray(d.content)) return 'description: not an ADF doc';
  const walk = (node: unknown): string | undefined => {
    const n = node as { type?: unknown; text?: unknown; content?: unknown; marks?: unknown };
    if (typeof n?.type !== 'string' || !NODES.has(n.type))
      return `description: unknown node ${String(n?.type)}`;
    if (n.type === 'text') {
      if (typeof n.text !== 'string' || n.text === '') return 'description: a text node without text';
      for (const m of (n.marks as { type?: string; attrs?: { href?: unknown } }[] | undefined) ?? []) {
        if (!MARKS.has(m.type ?? '')) return `description: unknown mark ${m.type}`;
        if (m.type === 'link' && typeof m.attrs?.href !== 'string') return 'description: a link without href';
      }
      return undefined;
    }
    for (const child of (n.content as unknown[] | undefined) ?? []) {
      const problem = walk(child);
      if (problem) return problem;
    }
    return undefined;
  };
  for (const node of d.content) {
    const problem = walk(node);
    if (problem) return problem;
  }
  return undefined;
}

export async function startJira(
  options: { project?: string; indexDelayMs?: number } = {},
): Promise<JiraStandIn> {
  const project = options.project ?? 'SEC';
  const queue: JiraScript[] = [];
  const auth = `Basic ${Buffer.from(`${JIRA_EMAIL}:${JIRA_TOKEN}`).toString('base64')}`;
  const stand: JiraStandIn = {
    url: '',
    issues: [],
    calls: [],
    indexDelayMs: options.indexDelayMs ?? 0,
    script: (...answers) => queue.push(...answers),
    close: () => server.close(),
  };
  const server = await standIn((req, raw, res) => {
    const url = new URL(req.url ?? '/', 'http://jira.test');
    let instead: JiraScript | undefined;
    const send = (status: number, body?: unknown, headers: Record<string, string> = {}) => {
      if (instead) {
        const answer = instead;
        instead = undefined;
        return send(answer.status, answer.body ?? {});
      }
      stand.calls.push({ method: req.method ?? '', path: url.pathname, status });
      res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
      res.end(body === undefined ? '' : JSON.stringify(body));
    };
    if (req.headers.authorization !== auth)
      return send(401, { errorMessages: ['Client must be authenticated'] });
    const scripted = queue.shift();
    if (scripted?.applied) instead = scripted;
    else if (scripted)
      return send(
        scripted.status,
        scripted.body ?? {},
        scripted.retryAfter !== undefined ? { 'Retry-After': String(scripted.retryAfter) } : {},
      );
    let body: Record<string, unknown> = {};
    try {
      body = raw ? (JSON.parse(raw) as Record<string, unknown>) : {};
    } catch {
      return send(400, { errorMessages: ['Unexpected character'], errors: {} });
    }
    const issueOf = (key: string) => stand.issues.find((i) => i.key === key);
    if (req.method === 'POST' && url.pathname === '/rest/api/3/issue') {
      const fields = (body.fields ?? {}) as Record<string, unknown>;
      const errors: Record<string, string> = {};
      if ((fields.project as { key?: unknown } | undefined)?.key !== project)
        errors.project = 'valid project is required';
      if (typeof (fields.issuetype as { name?: unknown } | undefined)?.name !== 'string')
        errors.issuetype = 'valid issue type is required';
      const summary = fields.summary;
      if (typeof summary !== 'string' || summary.length === 0)
        errors.summary = 'You must specify a summary of the issue.';
      else if (summary.length > 255) errors.summary = 'Summary must be less than 255 characters.';
      else if (/[\r\n]/.test(summary))
        errors.summary = 'The summary is invalid because it contains newline characters.';
      const labels = fields.labels;
      if (!Array.isArray(labels) || labels.some((l) => typeof l !== 'string' || /\s/.test(l)))
        errors.labels = 'The label must not contain spaces.';
      const adf = adfProblem(fields.description);
      if (adf) errors.description = adf;
      if (Object.keys(errors).length) return send(400, { errorMessages: [], errors });
      const key = `${project}-${stand.issues.length + 1}`;
      stand.issues.push({
        key,
        summary: summary as string,
        labels: labels as string[],
        description: fields.description,
        createdAt: Date.now(),
        comments: [],
        status: 'To Do',
      });
      return send(201, {
        id: String(10_000 + stand.issues.length),
        key,
        self: `${stand.url}/rest/api/3/issue/${key}`,
      });
    }
    if (req.method === 'GET' && url.pathname === '/rest/api/3/search/jql') {
      const jql = url.searchParams.get('jql') ?? '';
      const label = /^labels\s*=\s*"([^"]+)"$/.exec(jql)?.[1];
      if (!label) return send(400, { errorMessages: [`Error in the JQL Query: ${jql}`] });
      const now = Date.now();
      const found = stand.issues.filter(
        (i) => i.labels.includes(label) && now - i.createdAt >= stand.indexDelayMs,
      );
      return send(200, { issues: found.map((i) => ({ key: i.key })), isLast: true });
    }
    const comment = /^\/rest\/api\/3\/issue\/([^/]+)\/comment$/.exec(url.pathname);
    if (req.method === 'POST' && comment) {
      const issue = issueOf(decodeURIComponent(comment[1] ?? ''));
      if (!issue)
        return send(404, {
          errorMessages: ['Issue does not exist or you do not have permission to see it.'],
        });
      const problem = adfProblem(body.body);
      if (problem) return send(400, { errorMessages: [], errors: { comment: problem } });
      issue.comments.push(body.body);
      return send(201, { id: String(issue.comments.length) });
    }
    const transitions = /^\/rest\/api\/3\/issue\/([^/]+)\/transitions$/.exec(url.pathname);
    if (transitions) {
      const issue = issueOf(decodeURIComponent(transitions[1] ?? ''));
      if (!issue) return send(404, { errorMessages: ['Issue does not exist'] });
      const known = [
        { id: '21', name: 'In Progress' },
        { id: '31', name: 'Done' },
      ];
      if (req.method === 'GET') return send(200, { transitions: known });
      const id = (body.transition as { id?: unknown } | undefined)?.id;
      const to = known.find((t) => t.id === id);
      if (!to) return send(400, { errorMessages: ['Transition id is not valid'] });
      issue.status = to.name;
      return send(204);
    }
    return send(404, { errorMessages: [`no route ${req.method} ${url.pathname}`] });
  });
  stand.url = server.url;
  return stand;
}

/**
 * A real local HTTP stand-in for a Teams Workflows webhook URL, answering as Workflows does
 * (docs/destinations/teams.md): 413 for a body over 28,000 bytes, else 202 with an empty body. Like the
 * real flow, a message of the wrong shape (no `attachments` wrapper, a bare card, a card that is
 * not an AdaptiveCard 1.4) is still answered 202 and fails in the flow's run history: here,
 * `failedRuns`, which every test can assert empty. A test scripts other answers (429, 500, 400)
 * for the next requests; a scripted answer leaves the message unposted.
 */
import { afterEach } from 'vitest';
import type { Reply } from './receiver.ts';
import { standIn } from './stand-in.ts';

export const TEAMS_LIMIT_BYTES = 28_000;

export interface TeamsRequest {
  at: number;
  bytes: number;
  body: string;
  status: number;
}

export interface TeamsReceiver {
  url: string;
  requests: TeamsRequest[];
  /** Cards the flow posted to the channel, in order. */
  posted: { at: number; card: Record<string, unknown> }[];
  /** Run-history failures: messages answered 202 that the flow could not post, and why. */
  failedRuns: string[];
  script(...replies: Reply[]): void;
  close(): Promise<void>;
}

/** Why the flow would fail on this body, or undefined when it posts the card. */
export function flowFailure(body: string): string | undefined {
  let message: unknown;
  try {
    message = JSON.parse(body);
  } catch {
    return 'the body is not JSON';
  }
  const m = message as { type?: unknown; attachments?: unknown };
  if (!Array.isArray(m.attachments)) return "'attachments' is of type 'Null'";
  if (m.type !== 'message') return "'type' must be 'message'";
  if (m.attachments.length !== 1) return `expected one attachment, got ${m.attachments.length}`;
  const a = m.attachments[0] as { contentType?: unknown; content?: Record<string, unknown> };
  if (a.contentType !== 'application/vnd.microsoft.card.adaptive')
    return `contentType ${String(a.contentType)} is not an Adaptive Card`;
  const card = a.content;
  if (card?.type !== 'AdaptiveCard') return "Property 'type' must be 'AdaptiveCard'";
  if (card.version !== '1.4') return `card version ${String(card.version)} is not 1.4`;
  if (!Array.isArray(card.body) || card.body.length === 0) return 'the card has no body';
  return undefined;
}

/** `now` stamps each request (default the real time): a test on a skipping clock passes its own. */
export async function startTeamsReceiver(options: { now?: () => number } = {}): Promise<TeamsReceiver> {
  const now = options.now ?? Date.now;
  const queue: Reply[] = [];
  const receiver: TeamsReceiver = {
    url: '',
    requests: [],
    posted: [],
    failedRuns: [],
    script: (...replies) => queue.push(...replies),
    close: () => server.close(),
  };
  const server = await standIn(async (req, body, res, raw) => {
    const at = now();
    const answer = (status: number, text = '', headers: Record<string, string> = {}) => {
      receiver.requests.push({ at, bytes: raw.length, body, status });
      res.writeHead(status, headers);
      res.end(text);
    };
    const scripted = queue.shift();
    if (scripted && !('hang' in scripted)) {
      if (scripted.delayMs) await new Promise((r) => setTimeout(r, scripted.delayMs));
      answer(scripted.status, scripted.body, scripted.headers);
      return;
    }
    if (req.method !== 'POST') return answer(405);
    if (raw.length > TEAMS_LIMIT_BYTES) return answer(413, 'Request entity too large');
    const failure = flowFailure(body);
    if (failure) receiver.failedRuns.push(failure);
    else {
      const message = JSON.parse(body) as { attachments: { content: Record<string, unknown> }[] };
      receiver.posted.push({ at, card: message.attachments[0]?.content ?? {} });
    }
    answer(202);
  });
  receiver.url = `${server.url}/powerautomate/automations/direct/workflows/test/triggers/manual/paths/invoke?api-version=1&sig=test-signature`;
  return receiver;
}

/** Teams stand-ins a test starts as it needs them, each closed after that test. */
export function useTeamsReceivers(): (options?: { now?: () => number }) => Promise<TeamsReceiver> {
  const open: TeamsReceiver[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((r) => r.close()));
  });
  return async (options = {}) => {
    const r = await startTeamsReceiver(options);
    open.push(r);
    return r;
  };
}

/**
 * 8. A Slack app: 1,000 new leaked credentials over 20 domains (50 each, imported now), routed to
 * one bot-token Slack destination (the Slack Web API stand-in of the tests, a real local HTTP
 * server), with the product's default digest settings. One real `credentials` poll cycle on a
 * fresh table (dynalite in its own process, the emulator in this one), then delivery passes until
 * nothing is pending. Reported: the messages in the channel itself (thread parents), the replies
 * in their threads, the most `chat.postMessage` calls within any one second (at most one per
 * channel), and whether every login appeared exactly once across parents and replies (a broken
 * rule fails the section).
 */

import { runDeliveryPass } from '../../lib/deliver/pass.ts';
import { startEmulator } from '../../lib/emulator/index.ts';
import { runPollCycle } from '../../lib/poll/cycle.ts';
import { createDynamoClient } from '../../lib/state/table.ts';
import { SLACK_CHANNEL, startSlackApi } from '../helpers/slack-api.ts';
import { createTable, startDynaliteProcess } from './procs.ts';
import { benchRuntime } from './product.ts';
import { type Figure, figure } from './report.ts';
import { round } from './stats.ts';

const DOMAINS = 20;
const PER_DOMAIN = 50;
const TOKEN = 'emu-acme-token';

export async function measureSlackApp(
  log: (line: string) => void,
): Promise<{ figures: Figure[]; raw: unknown }> {
  const db = await startDynaliteProcess();
  const emu = await startEmulator({ seed: 42, credentials: 0 });
  const slack = await startSlackApi();
  try {
    const domains = Array.from({ length: DOMAINS }, (_, i) => `corp${i + 1}.test`);
    const logins = domains.flatMap((domain) =>
      emu.emulator.dataset.appendCredentials(PER_DOMAIN, { domain }).map((c) => c.identity_name),
    );
    const table = await createTable(db.url, 'slackapp');
    const runtime = await benchRuntime({
      apiUrl: emu.url,
      token: TOKEN,
      dynamoEndpoint: db.url,
      table,
      dynamo: createDynamoClient({ endpoint: db.url }),
      config: {
        sources: { tenantEvents: { enabled: false }, credentials: { domains, lookback: 'P1D' } },
        destinations: {
          soc: { type: 'slack', token: { secret: 'bot' }, channel: SLACK_CHANNEL, apiUrl: slack.url },
        },
        routes: [{ name: 'all', to: ['soc'] }],
      },
      secrets: { bot: slack.token },
    });
    const started = Date.now();
    const cycle = await runPollCycle(runtime.cycle, 'credentials', { deadline: started + 600_000 });
    let sent = cycle.delivery.sent;
    // What the cycle's own pass left (a budget stop) goes in further passes, as the next runs would.
    for (let pass = 0; pass < 20 && sent < logins.length; pass++) {
      const more = await runDeliveryPass(runtime.deliver, { deadline: Date.now() + 600_000 });
      sent += more.sent;
      if (more.sent === 0 && more.left === 0) break;
    }
    const seconds = (Date.now() - started) / 1000;
    const parents = slack.top();
    const replies = parents.flatMap((p) => slack.thread(p.ts));
    const shown = [...parents, ...replies].map((m) => JSON.stringify(m.blocks)).join('\n');
    // A login leaked twice (two credentials) is listed twice: once per credential.
    const expected = new Map<string, number>();
    for (const login of logins) expected.set(login, (expected.get(login) ?? 0) + 1);
    const notOnce = [...expected.entries()]
      .map(([login, n]) => [login, shown.split(login).length - 1, n] as const)
      .filter(([, seen, n]) => seen !== n);
    const inParents = logins.filter((l) => parents.some((p) => JSON.stringify(p.blocks).includes(l)));
    const posts = slack.calls.filter((c) => c.method === 'chat.postMessage').map((c) => c.at);
    const maxPerSecond = maxInWindow(posts, 1_000);
    log(
      `slackapp: ${sent} of ${logins.length} logins sent in ${round(seconds)} s: ${parents.length} parents, ${replies.length} replies`,
    );
    if (sent !== logins.length || notOnce.length || inParents.length) {
      throw new Error(
        `slackapp: ${sent} of ${logins.length} sent; ${notOnce.length} logins not shown once per credential (login, shown, credentials: ${JSON.stringify(notOnce.slice(0, 3))}); ${inParents.length} logins in a parent`,
      );
    }
    return {
      figures: [
        figure({
          section: 'slackapp',
          id: 'slackapp.parents',
          label: '1,000 logins over 20 domains to a Slack app: messages in the channel (thread parents)',
          value: parents.length,
          unit: '',
        }),
        figure({
          section: 'slackapp',
          id: 'slackapp.replies',
          label: '… replies in their threads',
          value: replies.length,
          unit: '',
          detail: "every credential's login exactly once across parents and replies, none in a parent",
        }),
        figure({
          section: 'slackapp',
          id: 'slackapp.maxPostsPerSecond',
          label: '… most chat.postMessage calls within any 1 s (one channel)',
          value: maxPerSecond,
          unit: '',
          budget: { max: 1, holds: 'count' },
        }),
        figure({
          section: 'slackapp',
          id: 'slackapp.seconds',
          label: '… cycle start to the last login sent',
          value: round(seconds),
          unit: 's',
        }),
      ],
      raw: { sent, parents: parents.length, replies: replies.length, posts: posts.map((t) => t - started) },
    };
  } finally {
    await slack.close();
    await emu.close();
    await db.stop();
  }
}

/** The most of `times` (ms) within any window of `ms`. */
function maxInWindow(times: number[], ms: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let best = 0;
  let start = 0;
  for (let end = 0; end < sorted.length; end++) {
    while ((sorted[end] as number) - (sorted[start] as number) >= ms) start++;
    best = Math.max(best, end - start + 1);
  }
  return best;
}

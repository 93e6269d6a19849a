/**
 * An HTTP proxy in front of dynalite that tells `onRequest` of each request before passing it on
 * (its `X-Amz-Target`, which names the action in DynamoDB's JSON protocol, and its body): what the
 * grants tests check each function's IAM statements against. A stand-in (stand-in.ts) that
 * answers with dynalite's answer.
 */
import { standIn } from './stand-in.ts';

export async function dynamoProxy(
  target: string,
  onRequest: (amzTarget: string, body: string) => void,
): Promise<{ url: string; close: () => Promise<void> }> {
  const proxy = await standIn(async (req, body, res, raw) => {
    onRequest(String(req.headers['x-amz-target'] ?? ''), body);
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers))
      if (typeof v === 'string' && !['host', 'content-length', 'connection'].includes(k)) headers[k] = v;
    const answer = await fetch(`${target}${req.url ?? '/'}`, { method: req.method, headers, body: raw });
    const out: Record<string, string> = {};
    answer.headers.forEach((v, k) => {
      if (!['content-length', 'content-encoding', 'transfer-encoding', 'connection'].includes(k)) out[k] = v;
    });
    res.writeHead(answer.status, out).end(Buffer.from(await answer.arrayBuffer()));
  });
  return { url: proxy.url, close: proxy.close };
}

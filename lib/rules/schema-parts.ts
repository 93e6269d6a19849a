/** Pieces every part of the config schema uses (schema.ts, schema-destinations.ts). */
import * as z from 'zod/mini';
import { nonEmpty } from './match-schema.ts';

/** `{ "secret": "NAME" }`: a value looked up in the secret object. */
export const secretRefSchema = z.strictObject({ secret: nonEmpty });
export type SecretRef = z.infer<typeof secretRefSchema>;
export const secretOr = (schema: z.ZodMiniType<string>) => z.union([schema, secretRefSchema]);

/** An absolute http(s) URL: what `httpUrl` takes, and what a URL held as a secret must be at start. */
export const isHttpUrl = (s: string): boolean => /^https?:\/\/[^\s/]+/i.test(s) && URL.canParse(s);

export const httpUrl = z.string().check(z.refine(isHttpUrl, 'expected an http(s) URL'));

/**
 * What start and `config validate --secrets` say of a URL held as a secret that is not one: the
 * path and the secret's name, never its value.
 */
export const notUrlProblem = (path: string, secret: string): string =>
  `${path}: secret ${JSON.stringify(secret)} is not an absolute http(s) URL (its value is not shown)`;

/**
 * `actions.slack.responseUrlPrefix`, where Slack's answers may be POSTed: an `https://` origin,
 * then `/` and at most a path that ends in `/`, with no user, query or fragment, written as the URL
 * parser writes it. A prefix that a longer host name could extend is refused; `http://` only for a
 * loopback host (a test stand-in).
 */
export const responseUrlPrefix = z
  .string()
  .check(
    z.refine(
      isResponseUrlPrefix,
      'expected an https:// origin followed by / (like "https://hooks.slack.com/"); without that slash the prefix would match another host too (https://hooks.slack.com.evil.example/)',
    ),
  );

function isResponseUrlPrefix(value: string): boolean {
  if (!URL.canParse(value)) return false;
  const url = new URL(value);
  const loopback = ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback)) return false;
  if (url.username || url.password || url.search || url.hash || value.includes('?') || value.includes('#'))
    return false;
  return value.startsWith(`${url.origin}/`) && value.endsWith('/') && url.href === value;
}

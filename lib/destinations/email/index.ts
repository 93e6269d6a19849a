/**
 * E-mail through an HTTP API: SendGrid, Postmark, or a generic JSON POST; each message a subject,
 * a plain text and an HTML part.
 */
import * as z from 'zod/mini';
import { nonEmpty } from '../../rules/match-schema.ts';
import { httpUrl, secretOr } from '../../rules/schema-parts.ts';
import { urlText } from '../describe.ts';
import type { KindBody, KindFace } from '../kind.ts';
import type { EmailDestination } from './types.ts';

export const PROVIDER_URLS = {
  sendgrid: 'https://api.sendgrid.com/v3/mail/send',
  postmark: 'https://api.postmarkapp.com/email',
} as const;

const emailAddress = z
  .string()
  .check(z.regex(/^[^\s@<>]+@[^\s@<>]+\.[^\s@<>]+$/, 'expected an e-mail address'));

export const emailSchema = z
  .strictObject({
    type: z.literal('email'),
    provider: z.enum(['generic', 'sendgrid', 'postmark']),
    /** Required for `generic`; defaults to the provider's API for the others. */
    url: z.optional(secretOr(httpUrl)),
    /** Bearer token (generic, sendgrid) or server token (postmark). */
    apiKey: z.optional(secretOr(nonEmpty)),
    from: emailAddress,
    to: z.array(emailAddress).check(z.minLength(1)),
    /** Postmark message stream; default `outbound`. */
    messageStream: z.optional(nonEmpty),
  })
  .check(
    z.superRefine((d, ctx) => {
      if (d.provider === 'generic' && d.url === undefined)
        ctx.addIssue({
          code: 'custom',
          path: ['url'],
          message: 'required for the generic e-mail provider',
          input: d,
        });
      if (d.provider !== 'generic' && d.apiKey === undefined)
        ctx.addIssue({ code: 'custom', path: ['apiKey'], message: `required for ${d.provider}`, input: d });
    }),
  );
export type EmailConfig = z.infer<typeof emailSchema>;

export const emailKind: KindFace<EmailConfig, EmailDestination> = {
  type: 'email',
  title: 'e-mail',
  schema: emailSchema,
  resolve: (name, config, get) => ({
    name,
    type: 'email',
    provider: config.provider,
    url:
      config.url !== undefined
        ? get(config.url, 'url')
        : config.provider === 'generic'
          ? ''
          : PROVIDER_URLS[config.provider],
    ...(config.apiKey !== undefined ? { apiKey: get(config.apiKey, 'apiKey') } : {}),
    from: config.from,
    to: config.to,
    ...(config.messageStream ? { messageStream: config.messageStream } : {}),
  }),
  describe: (config) =>
    `e-mail via ${config.provider}${config.url ? ` (${urlText(config.url)})` : ''} from ${config.from} to ${config.to.join(', ')}`,
  docs: async () => (await import('./docs.ts')).docs,
  load: async (): Promise<KindBody<EmailDestination>> => (await import('./body.ts')).emailBody,
};

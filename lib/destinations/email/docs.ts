/** What each key of this kind's config means: the config reference and `config schema` read it. */
import { SECRET_OR } from '../describe.ts';
import type { KeyDoc } from '../kind.ts';

export const docs: Record<string, KeyDoc> = {
  provider: {
    text: '`generic` (POST of from, to, subject, text, html to `url`), `sendgrid` or `postmark`',
    example: 'postmark',
  },
  url: {
    text: `the sending API's URL (required for \`generic\`; the provider's own by default): ${SECRET_OR}`,
    example: 'https://mail.example.com/send',
  },
  apiKey: {
    text: `the bearer token (generic, SendGrid) or server token (Postmark): ${SECRET_OR}`,
    example: { secret: 'postmarkToken' },
  },
  from: { text: 'the sender address', example: 'alerts@example.com' },
  to: { text: 'one or more recipient addresses', example: ['soc@example.com'] },
  messageStream: {
    text: 'Postmark message stream (default `outbound`)',
    example: 'outbound',
  },
};

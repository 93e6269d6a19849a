/**
 * The request that sends a rendered mail through the configured provider: SendGrid's v3 mail send,
 * Postmark's email API, or the generic JSON body (docs/destinations/email.md). The provider's key goes
 * only into the request's header, never into the rendered mail.
 */

import type { HttpRequest } from '../../deliver/outcome.ts';
import type { EmailContent } from './render.ts';
import type { EmailDestination } from './types.ts';

export function emailRequest(destination: EmailDestination, mail: EmailContent): HttpRequest {
  const json = { 'Content-Type': 'application/json' };
  if (destination.provider === 'sendgrid') {
    return {
      url: destination.url,
      headers: { ...json, Authorization: `Bearer ${destination.apiKey ?? ''}` },
      body: JSON.stringify({
        personalizations: [{ to: destination.to.map((email) => ({ email })) }],
        from: { email: destination.from },
        subject: mail.subject,
        content: [
          { type: 'text/plain', value: mail.text },
          { type: 'text/html', value: mail.html },
        ],
      }),
    };
  }
  if (destination.provider === 'postmark') {
    return {
      url: destination.url,
      headers: {
        ...json,
        Accept: 'application/json',
        'X-Postmark-Server-Token': destination.apiKey ?? '',
      },
      body: JSON.stringify({
        From: destination.from,
        To: destination.to.join(', '),
        Subject: mail.subject,
        TextBody: mail.text,
        HtmlBody: mail.html,
        MessageStream: destination.messageStream ?? 'outbound',
      }),
    };
  }
  return {
    url: destination.url,
    headers: {
      ...json,
      ...(destination.apiKey ? { Authorization: `Bearer ${destination.apiKey}` } : {}),
    },
    body: JSON.stringify({
      from: destination.from,
      to: destination.to,
      subject: mail.subject,
      text: mail.text,
      html: mail.html,
    }),
  };
}

/**
 * E-mail's rendering and its send through the provider (request.ts builds the request).
 * Postmark reports some refusals inside a 200: its `ErrorCode` decides.
 */

import { readAnswer } from '../../deliver/send-context.ts';
import { renderNotice } from '../../render/notice.ts';
import type { EmailContent } from '../../render/types.ts';
import type { KindBody } from '../kind.ts';
import type { EmailDestination } from './index.ts';
import { renderEmail } from './render.ts';
import { emailRequest } from './request.ts';

export const emailBody: KindBody<EmailDestination, EmailContent> = {
  render: (_destination, alerts, opts) => renderEmail(alerts, opts),
  notice: (_destination, notice, opts) => renderNotice('email', notice, opts),
  request: (destination, payload) => emailRequest(destination, payload),
  read(destination, answer, now) {
    const read = readAnswer(answer, now);
    if (!read.ok || destination.provider !== 'postmark') return read;
    try {
      const code = (JSON.parse(answer.body) as { ErrorCode?: unknown }).ErrorCode;
      if (typeof code === 'number' && code !== 0)
        return { ok: false, permanent: true, status: answer.status, error: `postmark ErrorCode ${code}` };
    } catch {
      // A 200 without a JSON body is taken as accepted.
    }
    return read;
  },
  problems(mail) {
    const problems: string[] = [];
    if (!mail.subject.trim()) problems.push('empty subject');
    if (/[\r\n]/.test(mail.subject)) problems.push('subject spans lines');
    if (!mail.text.trim() || !mail.html.trim()) problems.push('empty text or HTML part');
    return problems;
  },
  show: (_config, mail) => `Subject: ${mail.subject}\n--- text ---\n${mail.text}--- html ---\n${mail.html}`,
};

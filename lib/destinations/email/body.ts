/**
 * E-mail's rendering and its send through the provider (request.ts builds the request).
 * Postmark reports some refusals inside a 200: its `ErrorCode` decides.
 */

import { readAnswer } from '../../deliver/send-context.ts';
import { htmlText, lineText } from '../../render/escape.ts';
import { footer, TEST_MARK } from '../../render/notice.ts';
import type { Notice, RenderOptions } from '../../render/types.ts';
import type { KindBody } from '../kind.ts';
import type { EmailContent } from './render.ts';
import { renderEmail } from './render.ts';
import { emailRequest } from './request.ts';
import type { EmailDestination } from './types.ts';

export function emailNotice(notice: Notice, opts: RenderOptions): EmailContent {
  const body = notice.text.split(/\r?\n/);
  const lines =
    notice.kind === 'test' ? [TEST_MARK, '', notice.title, '', ...body] : [notice.title, '', ...body];
  return {
    subject: lineText(notice.kind === 'test' ? TEST_MARK : `[exposure-alerts] ${notice.title}`, 200),
    text: `${lines.map((l) => lineText(l, 5_000)).join('\n')}\n\n-- \n${lineText(footer(opts))}\n`,
    html: [
      '<!doctype html>',
      '<html><head><meta charset="utf-8"></head>',
      '<body style="font-family:-apple-system,Segoe UI,Helvetica,Arial,sans-serif;font-size:14px;color:#111">',
      ...(notice.kind === 'test'
        ? [`<p style="padding:8px;background:#eef;border:1px solid #99c"><b>${htmlText(TEST_MARK)}</b></p>`]
        : []),
      `<h2 style="font-size:18px">${htmlText(notice.title, 300)}</h2>`,
      `<p>${htmlText(notice.text, 5_000)}</p>`,
      `<p style="color:#777;font-size:12px">${htmlText(footer(opts))}</p>`,
      '</body></html>',
    ].join('\n'),
  };
}

export const emailBody: KindBody<EmailDestination, EmailContent> = {
  render: (_destination, alerts, opts) => renderEmail(alerts, opts),
  notice: (_destination, notice, opts) => emailNotice(notice, opts),
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

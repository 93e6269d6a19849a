/** A lookup's answer (actions/lookup.ts) as Slack text: for `/exposure lookup`. */
import type { LookupAnswer } from '../actions/lookup.ts';
import { slackText } from './escape.ts';

/** A lookup's answer as Slack text, every piece of upstream text escaped. */
export function lookupText(answer: LookupAnswer): string {
  if (answer.identities.length === 0) return 'Nothing found.';
  const lines = answer.identities.map((identity) => {
    const leaks = identity.leaks
      .slice(0, 5)
      .map(
        (l) =>
          `${slackText(l.source, 80)} (${l.leakedAt?.slice(0, 10) ?? 'unknown'})${l.password ? `: \`${slackText(l.password, 80).replaceAll('`', 'ˋ')}\`` : ''}`,
      );
    const more = identity.leaks.length > 5 ? `; and ${identity.leaks.length - 5} more` : '';
    return `• *${slackText(identity.name, 200).replaceAll('*', '∗')}*: ${leaks.join('; ')}${more}`;
  });
  // Whole lines only, within what one message holds: a cut never splits an escaped `&lt;`.
  let kept = 0;
  let size = 0;
  while (kept < lines.length && size + (lines[kept] as string).length + 1 <= 3_800)
    size += (lines[kept++] as string).length + 1;
  const dropped = lines.length - kept + answer.more;
  return [...lines.slice(0, kept), ...(dropped ? [`…and ${dropped} more identities.`] : [])].join('\n');
}

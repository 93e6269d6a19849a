/** What each key of this kind's config means: the config reference and `config schema` read it. */
import { SECRET_OR } from '../describe.ts';
import type { KeyDoc } from '../kind.ts';

export const docs: Record<string, KeyDoc> = {
  url: {
    text: `where the JSON body is POSTed: ${SECRET_OR}`,
    example: 'https://siem.example.com/in',
  },
  signingSecret: {
    text: `signs each body (X-Signature-256: sha256=HMAC of "<timestamp>.<body>"): ${SECRET_OR}`,
    example: { secret: 'siemKey' },
  },
  headers: {
    text: `extra request headers, name to value (${SECRET_OR})`,
    example: { Authorization: { secret: 'siemAuthHeader' } },
  },
  followUps: {
    text: 'also POST a signed body of kind `action` when someone acts on an item this webhook was sent (ignore, remediate, their undo): `{version, kind, destination, action: {type, by, at, reason?}, items, sentAt}` (default false)',
    example: true,
  },
};

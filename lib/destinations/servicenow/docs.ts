/** What each key of this kind's config means: the config reference and `config schema` read it. */
import { SECRET_OR } from '../describe.ts';
import type { KeyDoc } from '../kind.ts';

export const docs: Record<string, KeyDoc> = {
  url: { text: 'the instance', example: 'https://acme.service-now.com' },
  username: {
    text: 'the account incidents are created as',
    example: 'exposure.alerts',
  },
  password: {
    text: `that account’s password (${SECRET_OR})`,
    example: { secret: 'servicenowPassword' },
  },
  table: { text: 'the table (default `incident`)', example: 'incident' },
  assignmentGroup: {
    text: 'the assignment group every incident gets',
    example: 'SOC',
  },
};

/** Lambda entry: one cycle over the credential search of every configured domain, then a delivery pass. */
import { createPollerHandler } from './poller.ts';

export const handler = await createPollerHandler('credentials');

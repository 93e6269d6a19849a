/** Lambda entry: one cycle over tenant events and every configured identifier group, then a delivery pass. */
import { createPollerHandler } from './poller.ts';

export const handler = await createPollerHandler('events');

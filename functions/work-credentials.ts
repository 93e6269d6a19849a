/** Lambda entry, on the credentials stream queue: polls the domains of its messages, then a delivery pass. */
import { createWorkerHandler } from './worker.ts';

export const handler = await createWorkerHandler('credentials');

/** Lambda entry, on the events stream queue: polls the event streams of its messages, then a delivery pass. */
import { createWorkerHandler } from './worker.ts';

export const handler = await createWorkerHandler('events');

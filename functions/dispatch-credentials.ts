/** Lambda entry, on the credentials schedule: one message per credential domain for the workers. */
import { createDispatchHandler } from './dispatch.ts';

export const handler = await createDispatchHandler('credentials');

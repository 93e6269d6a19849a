/** Lambda entry, on the events schedule: one message per event stream (tenant, identifier groups) for the workers. */
import { createDispatchHandler } from './dispatch.ts';

export const handler = await createDispatchHandler('events');

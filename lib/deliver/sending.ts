/**
 * The send path of a delivery pass (pass.ts), loaded when a pass first has something to do beyond
 * reading: a message due, a silence to apply, a pause still running, a thread to resume. Most
 * passes find nothing due, so a worker's start does not carry rendering, sending, settling,
 * retries, threads and notices (lib/lazy.ts).
 */
export { holdBack, holdWaiting } from './hold.ts';
export { renderSafely } from './messages.ts';
export { pausedAlready } from './pause.ts';
export { passState, sendAll, stopEarly } from './queue.ts';
export { openThreads } from './thread.ts';

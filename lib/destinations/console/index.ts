/**
 * The terminal: each alert printed, as `npm start` shows them. A dry run turns every destination
 * into one of these, saying the kind it stands for, so nothing is sent; with `keepIn`, it leaves
 * each message's items in a file there and names the `preview` that shows them as the destination
 * would receive them (body.ts).
 */
import * as z from 'zod/mini';
import type { KindBody, KindFace } from '../kind.ts';
import type { ConsoleDestination, ConsoleOptions } from './types.ts';

export const consoleSchema = z.strictObject({ type: z.literal('console') });
export type ConsoleConfig = z.infer<typeof consoleSchema>;

export const consoleKind: KindFace<ConsoleConfig, ConsoleDestination, ConsoleOptions> = {
  type: 'console',
  title: 'the terminal',
  schema: consoleSchema,
  resolve: (name) => ({ name, type: 'console' }),
  describe: () => 'printed on the terminal',
  renderOptions: (run) => ({ color: !!run.color }),
  load: async (): Promise<KindBody<ConsoleDestination, unknown, unknown, ConsoleOptions>> =>
    (await import('./body.ts')).consoleBody,
};

/** A dry run's stand-in for a destination: printed, saying the kind it stands for, never sent. */
export function standInFor(name: string, type: string, keepIn?: string): ConsoleDestination {
  return {
    name,
    type: 'console',
    ...(type === 'console' ? {} : { standsFor: type, ...(keepIn ? { keepIn } : {}) }),
  };
}

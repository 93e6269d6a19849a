/** The latency section (issue 40): being built. */
import type { Figure } from './report.ts';

export async function measureLatency(
  _log: (line: string) => void,
): Promise<{ figures: Figure[]; raw: unknown }> {
  throw new Error('bench: the latency section is not built yet');
}

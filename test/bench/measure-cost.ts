/** The cost section (issue 40): being built. */
import type { Figure } from './report.ts';

export async function measureCost(
  _log: (line: string) => void,
): Promise<{ figures: Figure[]; raw: unknown }> {
  throw new Error('bench: the cost section is not built yet');
}

/**
 * Taking turns between lists: the first of each, then the second of each, and so on. How the
 * tenants of one deployment share a destination (docs/configuration.md): the delivery pass reads
 * each tenant's queue in turns (state/records/queue.ts), and a chunk's messages go in turns
 * (render/group.ts), so one tenant's flood does not hold back another's alerts.
 */
export function takeTurns<T>(lists: readonly (readonly T[])[]): T[] {
  const out: T[] = [];
  const longest = Math.max(0, ...lists.map((l) => l.length));
  for (let i = 0; i < longest; i++) for (const list of lists) if (i < list.length) out.push(list[i] as T);
  return out;
}

/**
 * Paging as async iterators, in the two styles the upstream uses.
 *
 * - Opaque `next`: send the previous page's `next` back as `from`. Only a null or missing `next`
 *   ends the feed; an empty page does not (filters can empty one). A `next` equal to the `from`
 *   just sent means the feed has nothing further for now; stopping there keeps a tail-following
 *   reader from spinning on the same cursor.
 * - Numeric id (legacy identity endpoints): `from` is the last id received, and an empty list is
 *   the end.
 *
 * Each page is fetched only when the consumer asks for it, so memory holds one page at a time.
 */
import { UpstreamError } from './errors.ts';

export interface NextPage {
  next: string | null;
}

/** A page together with the `from` that fetched it. */
export type Fetched<P> = P & { from: string | undefined };

export function isEndOfFeed(next: string | null | undefined, from: string | undefined): boolean {
  return next === null || next === undefined || next === '' || next === from;
}

/**
 * @example
 * for await (const page of pagesByNext((from) => client.searchTenantEvents({ from, order: 'asc' }))) {
 *   handle(page.items);
 * }
 */
export async function* pagesByNext<P extends NextPage>(
  fetchPage: (from: string | undefined) => Promise<P>,
  start?: string,
): AsyncGenerator<Fetched<P>> {
  let from = start;
  for (;;) {
    const page = await fetchPage(from);
    yield { ...page, from };
    if (isEndOfFeed(page.next, from)) return;
    from = page.next as string;
  }
}

export interface IdPage<T> {
  items: T[];
  /** Highest record id on the page, read from the raw response; undefined when the page is empty. */
  lastId: number | undefined;
  /** How many entries the raw response held, valid or not. */
  rawCount: number;
}

export async function* pagesById<P extends IdPage<unknown>>(
  fetchPage: (from: number | undefined) => Promise<P>,
  start?: number,
): AsyncGenerator<P & { from: number | undefined }> {
  let from = start;
  for (;;) {
    const page = await fetchPage(from);
    if (page.rawCount === 0) return;
    yield { ...page, from };
    if (page.lastId === undefined || (from !== undefined && page.lastId <= from)) {
      throw new UpstreamError(
        'invalid_response',
        'a legacy page has records but no id past the last one; cannot continue',
      );
    }
    from = page.lastId;
  }
}

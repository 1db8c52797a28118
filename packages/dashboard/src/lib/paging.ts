/**
 * Cursor paging for the lists that answer `{…, next_cursor}` (design §8.22: pass the previous
 * answer's `next_cursor` as `cursor`; null on the last page), as a TanStack infinite query with a
 * "Load more" action.
 */
import { useInfiniteQuery } from '@tanstack/react-query';
import type { QueryRoot } from './live';

/** A page of a cursor-paged list. */
export interface CursorPage {
  next_cursor: string | null;
}

/** The cursor of the page after `page`, or undefined when `page` is the last (design §8.22). */
export function nextCursor(page: CursorPage): string | undefined {
  return page.next_cursor ?? undefined;
}

/** Every item of the pages loaded so far, in order. */
export function flattenPages<P, T>(pages: readonly P[] | undefined, pick: (page: P) => readonly T[]): T[] {
  return (pages ?? []).flatMap((p) => [...pick(p)]);
}

/** What a paged list gives a screen. */
export interface Paged<T> {
  items: T[];
  error: unknown;
  isPending: boolean;
  hasMore: boolean;
  loadingMore: boolean;
  loadMore: () => void;
}

/**
 * A cursor-paged list under `key` (its first element a {@link QueryRoot}, so socket events refresh
 * it); `fetchPage(cursor)` loads one page and `pick` its items (design §8.22).
 */
export function usePaged<P extends CursorPage, T>(key: readonly [QueryRoot, ...unknown[]], fetchPage: (cursor: string | undefined) => Promise<P>, pick: (page: P) => readonly T[]): Paged<T> {
  const q = useInfiniteQuery({
    queryKey: key,
    queryFn: ({ pageParam }) => fetchPage(pageParam),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: nextCursor,
  });
  return {
    items: flattenPages(q.data?.pages, pick),
    error: q.error ?? undefined,
    isPending: q.isPending,
    hasMore: q.hasNextPage,
    loadingMore: q.isFetchingNextPage,
    loadMore: () => void q.fetchNextPage(),
  };
}

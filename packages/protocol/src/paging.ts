/**
 * Paging fields of list and history routes, written once (design §7 history paging, §8.12 list
 * limits and cursors): the `limit` of a list query, the cursor strings (`cursor`, or `since` on
 * history routes) that carry a previous page's `next_cursor`, and the page answer
 * `{<items>: [...], next_cursor}` whose `next_cursor` is null on the last page.
 *
 * The service clamps `limit` to its configured default and maximum (`LIMIT_LIST_DEFAULT`,
 * `LIMIT_LIST_MAX`; server lib/paging.ts `pageLimit`); the schema bounds are the contract's.
 */
import { Type, type TArray, type TInteger, type TNull, type TObject, type TOptional, type TSchema, type TString, type TUnion } from '@sinclair/typebox';

/** Page size a list route answers without `limit` (design §8.12). */
export const PAGE_LIMIT_DEFAULT = 50;
/** Largest `limit` of a list or history route (design §8.12). */
export const PAGE_LIMIT_MAX = 200;
/** Longest cursor string a list query accepts unless the route sets its own bound. */
export const PAGE_CURSOR_MAX_LENGTH = 200;

/** Options of {@link PageLimit}. */
export interface PageLimitOptions {
  /** Largest page size (default {@link PAGE_LIMIT_MAX}). */
  maximum?: number;
  /** OpenAPI description (e.g. the route's own default). */
  description?: string;
}

/**
 * The optional `limit` of a list query: an integer from 1 to `maximum` (default
 * {@link PAGE_LIMIT_MAX}), the page size asked for.
 */
export function PageLimit(options: PageLimitOptions = {}): TOptional<TInteger> {
  return Type.Optional(Type.Integer({ minimum: 1, maximum: options.maximum ?? PAGE_LIMIT_MAX, ...(options.description !== undefined ? { description: options.description } : {}) }));
}

/** Options of {@link PageCursor}. */
export interface PageCursorOptions {
  /** Longest accepted string; default {@link PAGE_CURSOR_MAX_LENGTH} (none when only `pattern` bounds it). */
  maxLength?: number;
  /** Regular expression the cursor must match (e.g. a decimal sequence number). */
  pattern?: string;
  /** OpenAPI description. */
  description?: string;
}

/**
 * An optional cursor string of a list query (`cursor`, or `since` on history routes): a previous
 * page's `next_cursor`. At least 1 and at most `maxLength` characters; with a `pattern` and no
 * `maxLength`, the pattern alone bounds it.
 */
export function PageCursor(options: PageCursorOptions = {}): TOptional<TString> {
  const { maxLength, pattern, description } = options;
  const bounds = pattern !== undefined && maxLength === undefined ? {} : { minLength: 1, maxLength: maxLength ?? PAGE_CURSOR_MAX_LENGTH };
  return Type.Optional(Type.String({ ...bounds, ...(pattern !== undefined ? { pattern } : {}), ...(description !== undefined ? { description } : {}) }));
}

/** The `cursor` and `limit` fields of a keyset-paged list query (see {@link PageCursor}, {@link PageLimit}). */
export function CursorPaging(cursor: PageCursorOptions = {}, limit: PageLimitOptions = {}): { cursor: TOptional<TString>; limit: TOptional<TInteger> } {
  return { cursor: PageCursor(cursor), limit: PageLimit(limit) };
}

/** The `next_cursor` of a page: where the next page starts, null on the last page. */
export type TNextCursor = TUnion<[TString, TNull]>;

/** The schema of a page answer: the items under `key` and `next_cursor`. */
export type TPage<K extends string, T extends TSchema> = TObject<{ [P in K]: TArray<T> } & { next_cursor: TNextCursor }>;

/**
 * A page answer `{<key>: T[], next_cursor: string | null}`: the page's items in the route's order
 * and the cursor that continues it (null on the last page).
 */
export function Page<K extends string, T extends TSchema>(key: K, item: T): TPage<K, T> {
  const properties = { [key]: Type.Array(item), next_cursor: Type.Union([Type.String(), Type.Null()]) } as { [P in K]: TArray<T> } & { next_cursor: TNextCursor };
  return Type.Object(properties);
}

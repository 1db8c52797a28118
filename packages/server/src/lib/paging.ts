/**
 * Paging helpers shared by every list and history route (design §7 history paging, §8.12 and
 * §8.22 list limits and cursors): the page size, the `since` parameter of history routes (a
 * sequence cursor or an ISO timestamp) and opaque keyset cursors for lists ordered by (time, id).
 */
import { badRequest } from './errors.js';
import { asUuid } from './ids.js';

const ISO_8601 = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/;

/**
 * A strict ISO 8601 date-time (with zone) between 1970 and 9999, as a Date.
 * @param field the parameter's name, for the 400 detail.
 * @throws 400 for anything else, including impossible dates such as 2024-02-30.
 */
export function parseTimestamp(s: string, field = 'since'): Date {
  const m = ISO_8601.exec(s);
  const t = Date.parse(s);
  if (m && !Number.isNaN(t)) {
    const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
    const day = new Date(Date.UTC(y, mo - 1, d));
    if (y >= 1970 && day.getUTCMonth() === mo - 1 && day.getUTCDate() === d) return new Date(t);
  }
  throw badRequest(
    field === 'since'
      ? 'since must be an ISO 8601 date-time with a zone (e.g. 2026-01-31T12:00:00Z) or a next_cursor value'
      : `${field} must be an ISO 8601 date-time with a zone (e.g. 2026-01-31T12:00:00Z)`,
  );
}

/** The `since` of a history route: a sequence cursor (digits) or an ISO timestamp; exclusive. @throws 400. */
export function parseSince(since: string): { seq: number } | { at: Date } {
  return /^\d{1,15}$/.test(since) ? { seq: Number(since) } : { at: parseTimestamp(since) };
}

/** The page size: the requested `limit` (already schema-checked) or the default, at most `listMax`. */
export function pageLimit(requested: number | undefined, limits: { listDefault: number; listMax: number }): number {
  return Math.min(requested ?? limits.listDefault, limits.listMax);
}

/** Opaque keyset cursor `<epoch ms>.<uuid>` of a row in a list ordered by (time, id). */
export function encodeKeyset(at: Date, id: string): string {
  return `${at.getTime()}.${id}`;
}

/** The (time, id) position of a keyset cursor. @throws 400 when it is not a next_cursor value. */
export function decodeKeyset(cursor: string): { at: Date; id: string } {
  const m = /^(\d{1,15})\.(.+)$/.exec(cursor);
  const id = asUuid(m?.[2]);
  if (!m || !id) throw badRequest('cursor must be a next_cursor value');
  return { at: new Date(Number(m[1])), id };
}

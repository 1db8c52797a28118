/** Identifier helpers. UUIDs are case-insensitive on input and canonical lowercase inside. */
import { randomUUID } from 'node:crypto';

/** An RFC 9562 UUID in its textual form (any version, any case). */
export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The value as a lowercase UUID, or undefined when it is not one. */
export function asUuid(v: unknown): string | undefined {
  return typeof v === 'string' && UUID_RE.test(v) ? v.toLowerCase() : undefined;
}

let prefixAt = -1;
let prefix = '';

/**
 * A time-ordered id for the rows written on the hot paths (messages, room messages and their
 * envelopes): a UUID version 7 (RFC 9562 §5.7), lower case (`xxxxxxxx-xxxx-7xxx-[89ab]xxx-…`),
 * a 48-bit Unix time in milliseconds (`at`, default now) followed by 74 random bits. Rows inserted
 * together land on the right-most pages of their primary-key B-tree instead of one random page
 * each (a room message writes 49 envelope rows), so PostgreSQL touches, dirties and logs fewer
 * index pages (docs/performance.md "Rooms"). The id tells nothing new: the row's creation time is
 * on the wire already (`timestamp`).
 *
 * The random bits are those of node:crypto's `randomUUID()` (a version 4 UUID from its pooled
 * CSPRNG): its time fields are replaced and its version nibble set to 7; the variant bits are
 * RFC 9562's in both. About 0.3 µs (the `uuid` package's `v7()` took about 5 µs here). Ids of one
 * millisecond are not ordered among themselves (RFC 9562 §6.2's optional counter is not used);
 * nothing reads an order from them.
 */
export function timeOrderedId(at: number = Date.now()): string {
  if (at !== prefixAt) {
    const hex = at.toString(16).padStart(12, '0');
    prefix = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-7`;
    prefixAt = at;
  }
  return prefix + randomUUID().slice(15); // randomUUID(): xxxxxxxx-xxxx-4xxx-Nxxx-xxxxxxxxxxxx
}

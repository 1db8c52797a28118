/** Identifier helpers. UUIDs are case-insensitive on input and canonical lowercase inside. */

/** An RFC 9562 UUID in its textual form (any version, any case). */
export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The value as a lowercase UUID, or undefined when it is not one. */
export function asUuid(v: unknown): string | undefined {
  return typeof v === 'string' && UUID_RE.test(v) ? v.toLowerCase() : undefined;
}

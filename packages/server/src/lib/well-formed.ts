/**
 * Text the database can store (SPEC §7): PostgreSQL refuses a string holding a lone UTF-16
 * surrogate ("\ud800" in JSON), so such input is the client's error (400), refused once for every
 * HTTP route (body, query string and params: http/well-formed.ts) and every WebSocket frame
 * (realtime/gateway.ts), before any validation or query runs.
 */

/** With the `u` flag a paired surrogate is one code point, so this matches lone surrogates only. */
const LONE_SURROGATE = /\p{Surrogate}/u;

/**
 * The path (`a.b[2]`, or `''` for the value itself) of the first string — value or object key —
 * in `value` that is not well-formed UTF-16, or undefined when every string is well formed.
 */
export function illFormedPath(value: unknown, path = ''): string | undefined {
  if (typeof value === 'string') return LONE_SURROGATE.test(value) ? path : undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = illFormedPath(value[i], `${path}[${i}]`);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      const at = path ? `${path}.${k}` : k;
      if (LONE_SURROGATE.test(k)) return at;
      const found = illFormedPath(v, at);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}

/** The `detail` of a refusal of ill-formed text at `path` of `part` ("body", "frame", …). */
export function illFormedDetail(part: string, path: string): string {
  return `invalid ${part}: ${path ? `${path} ` : ''}holds a lone UTF-16 surrogate (not valid Unicode text)`;
}


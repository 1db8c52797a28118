/**
 * Text the database can store (contract §7): PostgreSQL refuses a string holding a lone UTF-16
 * surrogate ("\ud800" in JSON), so such input is the client's error (400), refused once for every
 * HTTP route (body, query string and params: http/well-formed.ts) and every WebSocket frame
 * (realtime/gateway.ts), before any validation or query runs.
 */

/** With the `u` flag a paired surrogate is one code point, so this matches lone surrogates only. */
const LONE_SURROGATE = /\p{Surrogate}/u;

/** `String.prototype.isWellFormed` (ES2024, Node 20+) where present, else the regex. */
const isWellFormed: (s: string) => boolean =
  typeof (String.prototype as { isWellFormed?: unknown }).isWellFormed === 'function'
    ? (s) => (s as string & { isWellFormed(): boolean }).isWellFormed()
    : (s) => !LONE_SURROGATE.test(s);

/** True when every string (value or key) in `value` is well formed: the fast pass, no paths built. */
function allWellFormed(value: unknown): boolean {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'string') {
      if (!isWellFormed(v)) return false;
    } else if (Array.isArray(v)) {
      for (const x of v) if (typeof x === 'object' || typeof x === 'string') stack.push(x);
    } else if (v !== null && typeof v === 'object' && !ArrayBuffer.isView(v)) {
      // Bytes (protobuf `bytes` fields) hold no text. Own keys only: `for…in` would also walk a
      // decoded protobuf message's prototype, which holds a default for every field (it was 39%
      // of the server's CPU on protobuf ingest).
      for (const k of Object.keys(v)) {
        if (!isWellFormed(k)) return false;
        const x = (v as Record<string, unknown>)[k];
        if (typeof x === 'object' || typeof x === 'string') stack.push(x);
      }
    }
  }
  return true;
}

/**
 * The path (`a.b[2]`, or `''` for the value itself) of the first string — value or object key —
 * in `value` that is not well-formed UTF-16, or undefined when every string is well formed.
 * Iterative (an explicit stack), so arbitrarily deep JSON cannot overflow the call stack. Paths
 * are only built when a fast pass found an ill-formed string.
 */
export function illFormedPath(value: unknown): string | undefined {
  if (allWellFormed(value)) return undefined;
  const stack: [unknown, string][] = [[value, '']];
  while (stack.length > 0) {
    const [v, path] = stack.pop()!;
    if (typeof v === 'string') {
      if (LONE_SURROGATE.test(v)) return path;
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], `${path}[${i}]`]);
    } else if (v !== null && typeof v === 'object') {
      const entries = Object.entries(v);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [k, child] = entries[i]!;
        const at = path ? `${path}.${k}` : k;
        if (LONE_SURROGATE.test(k)) return at;
        stack.push([child, at]);
      }
    }
  }
  return undefined;
}

/** The `detail` of a refusal of ill-formed text at `path` of `part` ("body", "frame", …). */
export function illFormedDetail(part: string, path: string): string {
  return `invalid ${part}: ${path ? `${path} ` : ''}holds a lone UTF-16 surrogate (not valid Unicode text)`;
}


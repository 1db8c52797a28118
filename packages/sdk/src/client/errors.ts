/**
 * Errors raised by the REST client (contract §7, design §7). Every service error is `{detail}` with an
 * HTTP status; a 429 also carries a `Retry-After` header (contract §7, §8).
 */

/**
 * A non-2xx answer of the Parley service (contract §7).
 *
 * - `status`: the HTTP status (400 bad input, 401 missing/invalid auth, 403 wrong tenant or
 *   revoked device, 404 not found, 409 transition not allowed, 413 too large, 429 rate limited,
 *   5xx server fault).
 * - `detail`: the service's human-readable `detail` (or the status text when the body was not
 *   the `{detail}` JSON of contract §7, e.g. an answer from a proxy).
 * - `retryAfter`: for 429 (and 503), the `Retry-After` header in **seconds**, when present.
 * - `retryAfterMs`: the same in milliseconds.
 */
export class ParleyApiError extends Error {
  override readonly name = 'ParleyApiError';
  /** HTTP status code. */
  readonly status: number;
  /** The `detail` of the `{detail}` error body (contract §7). */
  readonly detail: string;
  /** `Retry-After` in seconds (429 answers, contract §7), when the service sent one. */
  readonly retryAfter?: number;
  /** HTTP method of the failed request. */
  readonly method: string;
  /** Request path (without the query string) of the failed request. */
  readonly path: string;

  constructor(init: { status: number; detail: string; retryAfter?: number; method: string; path: string }) {
    super(`${init.method} ${init.path} failed with ${init.status}: ${init.detail}`);
    this.status = init.status;
    this.detail = init.detail;
    if (init.retryAfter !== undefined) this.retryAfter = init.retryAfter;
    this.method = init.method;
    this.path = init.path;
  }

  /** `retryAfter` in milliseconds, or undefined when the service sent no `Retry-After`. */
  get retryAfterMs(): number | undefined {
    return this.retryAfter === undefined ? undefined : this.retryAfter * 1000;
  }
}

/**
 * The request never got an HTTP answer: DNS/connection failure, TLS error, abort or the client's
 * timeout (`ParleyClientOptions.timeoutMs`). `cause` holds the underlying error; `timedOut` is
 * true when the client's own timeout fired, `aborted` when the caller's AbortSignal did.
 */
export class ParleyNetworkError extends Error {
  override readonly name = 'ParleyNetworkError';
  constructor(
    message: string,
    /** The client's timeout fired. */
    readonly timedOut: boolean,
    /** The caller's AbortSignal fired. */
    readonly aborted: boolean,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * Parse a `Retry-After` header value (delta-seconds or an HTTP-date) into seconds (>= 0).
 * Returns undefined for a missing or unparseable value.
 */
export function parseRetryAfter(value: string | null | undefined, now: number = Date.now()): number | undefined {
  if (value === null || value === undefined || value.trim() === '') return undefined;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Number(v);
  const t = Date.parse(v);
  if (Number.isNaN(t)) return undefined;
  return Math.max(0, Math.ceil((t - now) / 1000));
}

/**
 * What a database error means for the caller (contract §7): the client's bad data, or a database that
 * is down. node-postgres and PGlite errors carry PostgreSQL's SQLSTATE in `code`; drizzle wraps
 * them in `cause`.
 */

/** Whether `err` or one of its causes (drizzle wraps driver errors in `cause`) satisfies `test`. */
function someCause(err: unknown, test: (e: { code?: unknown; message?: unknown }) => boolean): boolean {
  for (let e: unknown = err, depth = 0; e && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    if (typeof e === 'object' && test(e as { code?: unknown; message?: unknown })) return true;
  }
  return false;
}

/**
 * A PostgreSQL "data exception" (SQLSTATE class 22: bad encoding such as NUL in text, datetime
 * out of range, …) is the client's bad input, not a server fault.
 */
export const isDataException = (err: unknown) => someCause(err, (e) => typeof e.code === 'string' && /^22[0-9A-Z]{3}$/.test(e.code));

/** Socket errors of a database connection that is down or going away. */
const CONNECTION_ERRNOS = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND']);
const CONNECTION_MESSAGE = /Connection terminated|terminating connection|connection error and is not queryable|Client was closed and is not queryable|timeout exceeded when trying to connect/i;

/**
 * The database is unreachable or restarting (SQLSTATE class 08 connection exception, 57P01–57P03
 * admin shutdown / crash shutdown / cannot connect now, socket errors, node-postgres' "Connection
 * terminated"): the request may succeed when retried, so it is a 503, not a 500.
 */
export const isDatabaseUnavailable = (err: unknown) =>
  someCause(
    err,
    (e) =>
      (typeof e.code === 'string' && (/^08[0-9A-Z]{3}$/.test(e.code) || /^57P0[123]$/.test(e.code) || CONNECTION_ERRNOS.has(e.code))) ||
      (typeof e.message === 'string' && CONNECTION_MESSAGE.test(e.message)),
  );

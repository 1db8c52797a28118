/**
 * SQL statement counting for the benches (rooms, marketplace): wraps `pg.Client.prototype.query`
 * in the bench process, where the server runs (the load generators run in their own processes).
 */
import pg from 'pg';

/**
 * Count the SQL statements (and, among them, `begin`s: transactions) sent through `pg.Client` in
 * this process from now on. The load generator runs in its own process, so between two snapshots
 * that bracket a scenario (and exclude the bench's own counting queries) these are the server's.
 */
export function countSql(): { statements: number; transactions: number } {
  const counts = { statements: 0, transactions: 0 };
  const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = proto.query;
  proto.query = function (this: unknown, ...args: unknown[]) {
    counts.statements++;
    const q = args[0];
    const text = typeof q === 'string' ? q : (q as { text?: unknown } | null)?.text;
    if (typeof text === 'string' && /^\s*begin\b/i.test(text)) counts.transactions++;
    return original.apply(this, args);
  };
  return counts;
}

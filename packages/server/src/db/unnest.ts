/**
 * Many rows as ONE statement of array parameters (`unnest`), whatever their number: the shape of
 * every hot-path multi-row write (room messages and envelopes, policy evaluation records, webhook
 * rows; the 1:1 message writer has the same shape). One parameter per column keeps the statement
 * text and its parameter count fixed, unlike a multi-row VALUES list.
 *
 * Bytes travel as hex text (`hex` columns; the one array encoding both drivers, node-postgres and
 * PGlite, accept): select them with `decode(<alias>.<column>, 'hex')`.
 */
import { sql, type SQL } from 'drizzle-orm';

/** PostgreSQL element types of the array parameters; `hex` is `text` holding bytes as hex. */
export type UnnestType = 'uuid' | 'text' | 'int' | 'bigint' | 'float8' | 'bool' | 'timestamptz' | 'jsonb' | 'hex';

/** One column: its name in the row alias, its element type, and how to read it from a row (null allowed). */
export interface UnnestColumn<R> {
  name: string;
  type: UnnestType;
  value: (row: R) => unknown;
}

/** Column helper: `col('id', 'uuid', (r) => r.id)`. */
export const col = <R>(name: string, type: UnnestType, value: (row: R) => unknown): UnnestColumn<R> => ({ name, type, value });

/** The driver value of one element: Buffers as hex, Dates as ISO text, JSON values as their text. */
function element(type: UnnestType, v: unknown): unknown {
  if (v === null || v === undefined) return null;
  if (type === 'hex') return (v as Buffer).toString('hex');
  if (type === 'timestamptz') return v instanceof Date ? v.toISOString() : v;
  if (type === 'jsonb') return JSON.stringify(v);
  return v;
}

/**
 * The FROM item `unnest($1::t1[], $2::t2[], …) [with ordinality] as <alias>(c1, c2, … [, <ordinality>])`
 * over `rows`, one array parameter per column. `ordinality` names a 1-based row-number column
 * (input order, e.g. to join rows of two arrays or to keep their order in an INSERT … SELECT …
 * ORDER BY). An empty `rows` gives zero rows.
 */
export function unnestRows<R>(rows: readonly R[], columns: readonly UnnestColumn<R>[], alias: string, ordinality?: string): SQL {
  const arrays = columns.map((c) => sql`${sql.param(rows.map((r) => element(c.type, c.value(r))))}::${sql.raw(c.type === 'hex' ? 'text' : c.type)}[]`);
  const names = [...columns.map((c) => c.name), ...(ordinality ? [ordinality] : [])].join(', ');
  return sql`unnest(${sql.join(arrays, sql`, `)})${sql.raw(ordinality ? ' with ordinality' : '')} as ${sql.raw(alias)}(${sql.raw(names)})`;
}

/** Rows of a raw `execute` (both drivers answer `{ rows }`). */
export async function rowsOf<T>(q: Promise<unknown>): Promise<T[]> {
  return ((await q) as { rows: T[] }).rows;
}

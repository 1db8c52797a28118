/**
 * Many rows as ONE statement of array parameters (`unnest`), whatever their number: the shape of
 * every hot-path multi-row write (room messages and envelopes, policy evaluation records, webhook
 * rows; the 1:1 message writer has the same shape). One parameter per column keeps the statement
 * text and its parameter count fixed, unlike a multi-row VALUES list. UUIDs, integers and times
 * travel as array literals (no per-element escaping).
 *
 * Bytes (`bytes` columns) travel in ONE binary parameter for the whole call, every value of every
 * bytes column concatenated, sliced by per-row offset and length columns: no hex or escaping of
 * the payloads, whatever their number (both drivers, node-postgres and PGlite, send a Buffer as
 * binary). Select them with {@link bytesOf}.
 */
import { sql, type SQL } from 'drizzle-orm';
import { arrayLiteral, elementPattern } from './array-literal.js';

/** PostgreSQL element types of the array parameters; `bytes` is a `bytea` value (Buffer) sliced from the call's binary parameter. */
export type UnnestType = 'uuid' | 'text' | 'int' | 'bigint' | 'float8' | 'bool' | 'timestamptz' | 'jsonb' | 'bytes';

/** One column: its name in the row alias, its element type, and how to read it from a row and its 0-based index (null allowed). */
export interface UnnestColumn<R> {
  name: string;
  type: UnnestType;
  value: (row: R, index: number) => unknown;
}

/** Column helper: `col('id', 'uuid', (r) => r.id)`. */
export const col = <R>(name: string, type: UnnestType, value: (row: R, index: number) => unknown): UnnestColumn<R> => ({ name, type, value });

/** The driver value of one element: Dates as ISO text, JSON values as their text. */
function element(type: UnnestType, v: unknown): unknown {
  if (v === null || v === undefined) return null;
  if (type === 'timestamptz') return v instanceof Date ? v.toISOString() : v;
  if (type === 'jsonb') return JSON.stringify(v);
  return v;
}

/** Element patterns of the columns sent as array literals (null elements as `NULL`). */
const LITERAL: Partial<Record<UnnestType, RegExp>> = {
  uuid: elementPattern('[0-9a-fA-F-]{36}|NULL'),
  int: elementPattern('-?\\d+|NULL'),
  bigint: elementPattern('-?\\d+|NULL'),
  timestamptz: elementPattern('[0-9T:.Z+-]+|NULL'),
};

/**
 * One array parameter of `values` cast to `type[]`: UUIDs, integers and ISO times as one array
 * literal (db/array-literal.ts: no per-element quoting or escaping by the driver), other types
 * as a JS array the driver serialises.
 */
function typed(values: unknown[], type: UnnestType): SQL {
  const pgType = sql.raw(type);
  const literal = LITERAL[type];
  if (!literal) return sql`${sql.param(values)}::${pgType}[]`;
  return sql`${arrayLiteral(values.map((v) => (v === null ? 'NULL' : (v as string | number))), literal)}::${pgType}[]`;
}

/**
 * The FROM item `unnest($1::t1[], $2::t2[], …) [with ordinality] as <alias>(c1, c2, … [, <ordinality>])`
 * over `rows`, one array parameter per column (a `bytes` column: its offset and length columns
 * `<name>_off`, `<name>_len`, plus the cross-joined binary parameter `<alias>_bytes(b)`).
 * `ordinality` names a 1-based row-number column (input order, e.g. to join rows of two arrays or
 * to keep their order in an INSERT … SELECT … ORDER BY). An empty `rows` gives zero rows.
 */
export function unnestRows<R>(rows: readonly R[], columns: readonly UnnestColumn<R>[], alias: string, ordinality?: string): SQL {
  const arrays: SQL[] = [];
  const names: string[] = [];
  const chunks: Buffer[] = [];
  let at = 1; // substring() counts from 1
  for (const c of columns) {
    if (c.type !== 'bytes') {
      arrays.push(typed(rows.map((r, i) => element(c.type, c.value(r, i))), c.type));
      names.push(c.name);
      continue;
    }
    const offsets: (number | null)[] = [];
    const lengths: (number | null)[] = [];
    for (let i = 0; i < rows.length; i++) {
      const b = c.value(rows[i]!, i) as Buffer | null | undefined;
      offsets.push(b ? at : null);
      lengths.push(b ? b.length : null);
      if (b) {
        chunks.push(b);
        at += b.length;
      }
    }
    arrays.push(typed(offsets, 'int'), typed(lengths, 'int'));
    names.push(`${c.name}_off`, `${c.name}_len`);
  }
  if (ordinality) names.push(ordinality);
  const from = sql`unnest(${sql.join(arrays, sql`, `)})${sql.raw(ordinality ? ' with ordinality' : '')} as ${sql.raw(alias)}(${sql.raw(names.join(', '))})`;
  if (!columns.some((c) => c.type === 'bytes')) return from;
  return sql`${from} cross join (select ${Buffer.concat(chunks, at - 1)}::bytea as b) as ${sql.raw(`${alias}_bytes`)}`;
}

/** The value of `bytes` column `name` of the {@link unnestRows} item `alias` (null where the row's value was null). */
export const bytesOf = (alias: string, name: string): SQL => sql.raw(`substring(${alias}_bytes.b from ${alias}.${name}_off for ${alias}.${name}_len)`);

/**
 * Several data-modifying statements (`insert …`, each a CTE body) as ONE statement:
 * `with w1 as (<body1>), w2 as (<body2>) <final>` (`final` defaults to `select 1`). PostgreSQL runs
 * every data-modifying CTE to completion whether or not `final` reads it.
 */
export function withAll(bodies: readonly SQL[], final: SQL = sql`select 1`): SQL {
  if (bodies.length === 0) return final;
  return sql`with ${sql.join(
    bodies.map((b, i) => sql`${sql.raw(`w${i + 1}`)} as (${b})`),
    sql`, `,
  )} ${final}`;
}

/** Rows of a raw `execute` (both drivers answer `{ rows }`). */
export async function rowsOf<T>(q: Promise<unknown>): Promise<T[]> {
  return ((await q) as { rows: T[] }).rows;
}

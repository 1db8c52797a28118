/**
 * Zero-knowledge check of the demo (contract §1.2): search every text-like and bytea column of every
 * table of the service's database for the UTF-8 of given plaintexts. Runs as the database's own
 * (super)user, outside any tenant scope, so row-level security hides nothing.
 */
import type { Database } from '../packages/server/src/db/client.js';

/** A plaintext found in the database. */
export interface Leak {
  table: string;
  column: string;
  /** The plaintext found (as searched for). */
  needle: string;
  rows: number;
}

/** What {@link scanForPlaintext} looked at and found. */
export interface ScanReport {
  /** `schema.table.column` of every column searched. */
  columns: string[];
  /** Rows in the messages table (the ciphertext store). */
  messageRows: number;
  leaks: Leak[];
}

type Row = Record<string, unknown>;

async function query(database: Database, sql: string, params: unknown[] = []): Promise<Row[]> {
  if (database.raw.kind === 'pglite') return (await database.raw.client.query<Row>(sql, params)).rows;
  return (await database.raw.pool.query(sql, params)).rows as Row[];
}

const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;

/**
 * Search every `bytea`, `text`, `character varying`, `character`, `json`, `jsonb`, array and enum
 * column of every base table (all schemas but the system ones) for each needle's UTF-8 bytes
 * (bytea columns byte-wise, the others in their text form).
 */
export async function scanForPlaintext(database: Database, needles: string[]): Promise<ScanReport> {
  const columns = await query(
    database,
    `select c.table_schema, c.table_name, c.column_name, c.data_type
       from information_schema.columns c
       join information_schema.tables t on t.table_schema = c.table_schema and t.table_name = c.table_name
      where t.table_type = 'BASE TABLE'
        and c.table_schema not in ('pg_catalog', 'information_schema')
        and c.data_type in ('bytea', 'text', 'character varying', 'character', 'json', 'jsonb', 'ARRAY', 'USER-DEFINED')
      order by 1, 2, 3`,
  );
  const leaks: Leak[] = [];
  const unique = [...new Set(needles.filter((n) => n.length > 0))];
  for (const c of columns) {
    const table = `${ident(String(c.table_schema))}.${ident(String(c.table_name))}`;
    const column = ident(String(c.column_name));
    const bytea = c.data_type === 'bytea';
    for (const needle of unique) {
      const condition = bytea ? `position(decode($1, 'hex') in ${column}) > 0` : `strpos(${column}::text, $1) > 0`;
      const param = bytea ? Buffer.from(needle, 'utf8').toString('hex') : needle;
      const [row] = await query(database, `select count(*)::int as n from ${table} where ${condition}`, [param]);
      const n = Number(row?.n ?? 0);
      if (n > 0) leaks.push({ table: `${String(c.table_schema)}.${String(c.table_name)}`, column: String(c.column_name), needle, rows: n });
    }
  }
  const [count] = await query(database, 'select count(*)::int as n from messages');
  return {
    columns: columns.map((c) => `${String(c.table_schema)}.${String(c.table_name)}.${String(c.column_name)}`),
    messageRows: Number(count?.n ?? 0),
    leaks,
  };
}

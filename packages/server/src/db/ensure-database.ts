/**
 * Create the PostgreSQL database a `DATABASE_URL` names when it does not exist (`npm run cluster`,
 * `npm run cli -- create-db`): connects to the `postgres` maintenance database of the same server
 * with the same user, which needs the CREATEDB privilege (PostgreSQL docs, CREATE DATABASE).
 */
import pg from 'pg';

/**
 * Create the database of `url` unless it exists. Answers whether it was created.
 * @throws Error when the URL names no database; the driver's error when the server cannot be
 *   reached or refuses (login, privilege).
 */
export async function ensureDatabase(url: string): Promise<boolean> {
  const u = new URL(url);
  const name = decodeURIComponent(u.pathname.slice(1));
  if (!name) throw new Error('DATABASE_URL names no database');
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  client.on('error', () => undefined);
  await client.connect();
  try {
    const found = await client.query('select 1 from pg_database where datname = $1', [name]);
    if (found.rowCount !== 0) return false;
    await client.query(`create database "${name.replace(/"/g, '""')}"`);
    return true;
  } finally {
    await client.end();
  }
}

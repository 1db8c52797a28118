/**
 * db/inserted-once.ts: the one-row answer of an insert-once statement tells exactly which of the
 * caller's rows were new, whether all, none or some of them were (run on PGlite).
 */
import { PGlite } from '@electric-sql/pglite';
import { sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/pglite';
import { afterAll, describe, expect, it } from 'vitest';
import { insertedItems, insertedOnceAnswer, type InsertedOnce } from '../../src/db/inserted-once.js';

describe('insertedOnceAnswer / insertedItems', () => {
  const client = new PGlite();
  const db = drizzle(client);
  afterAll(() => client.close());

  const insert = async (keys: string[]): Promise<InsertedOnce> => {
    const res = await db.execute<InsertedOnce>(sql`
      with ins as (
        insert into t (a, b) select x, 'b' || x from unnest(${`{${keys.join(',')}}`}::text[]) as x on conflict do nothing returning a, b
      )
      ${insertedOnceAnswer(keys.length, sql`a || ':' || b`)}`);
    return res.rows[0]!;
  };
  const items = (keys: string[]) => keys.map((k) => ({ a: k, b: `b${k}` }));
  const keyOf = (i: { a: string; b: string }) => `${i.a}:${i.b}`;

  it('answers null keys when every row was new, the inserted keys when some existed, an empty list when none was new', async () => {
    await client.exec('create table t (a text primary key, b text not null)');
    const before = Date.now();
    const all = await insert(['k1', 'k2', 'k3']);
    expect(all.keys).toBeNull();
    expect(all.at).toBeGreaterThanOrEqual(before - 1000);
    expect(insertedItems(all, items(['k1', 'k2', 'k3']), keyOf).map((i) => i.a)).toEqual(['k1', 'k2', 'k3']);

    const some = await insert(['k2', 'k4', 'k1', 'k5']);
    expect(insertedItems(some, items(['k2', 'k4', 'k1', 'k5']), keyOf).map((i) => i.a)).toEqual(['k4', 'k5']);

    const none = await insert(['k1', 'k4']);
    expect(none.keys).toBe('');
    expect(insertedItems(none, items(['k1', 'k4']), keyOf)).toEqual([]);
    // the rows the answer names are the rows stored, with the answer's time
    const stored = await client.query<{ n: number }>('select count(*)::int as n from t');
    expect(stored.rows[0]!.n).toBe(5);
  });
});

/**
 * Transaction-scoped advisory locks (PostgreSQL `pg_advisory_xact_lock`): serialise the
 * transactions that name the same key until each one ends, so a check-then-write (one open channel
 * per pair, one live agreement, a per-pair claim cap, the audit chain's next hash) cannot race.
 * Keys are namespaced strings (`audit:<tenant>`, `a2a:<a>:<b>`, …) hashed to 64 bits.
 */
import { sql } from 'drizzle-orm';
import type { Tx } from './client.js';

/** Wait for, then hold until `tx` ends, the advisory lock of `key`. */
export async function xactLock(tx: Tx, key: string): Promise<void> {
  await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${key}, 0))`);
}

/** The key of an unordered pair (`<namespace>:<smaller>:<larger>`), the same whichever side asks. */
export function pairKey(namespace: string, a: string, b: string): string {
  return `${namespace}:${[a, b].sort().join(':')}`;
}

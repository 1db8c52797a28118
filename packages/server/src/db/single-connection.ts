/**
 * The one-connection rule of the embedded database (design §2 PGlite; docs/decisions.md
 * "PGlite's single connection"). PGlite serves one session: an open transaction holds it until it
 * ends, and every other query or transaction waits its turn. Code running inside a transaction
 * that awaits a statement on the DATABASE (instead of on its `tx`) therefore waits for a
 * transaction that waits for it: the request never answers, and every later request queues
 * behind it. On PostgreSQL the same code takes a second pooled connection and works, so only the
 * embedded default hangs.
 *
 * {@link guardSingleConnection} makes that mistake fail at once instead: while a transaction of a
 * guarded client is open, the async work it awaits that calls `query`, `exec` or `transaction` on
 * the client itself gets a {@link SingleConnectionDeadlockError} (the transaction rolls back and
 * the request answers 500). Work that must run on its own transaction after the current one ends
 * (a background reload started from inside a transaction) goes through {@link outsideTransaction}.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { PGlite, Transaction } from '@electric-sql/pglite';

/** The open transactions of the current async context (innermost last). */
interface Open {
  client: object;
  open: boolean;
}
const context = new AsyncLocalStorage<readonly Open[]>();

/** A statement on the database issued from inside one of its own transactions on a single connection: it would wait forever. */
export class SingleConnectionDeadlockError extends Error {
  constructor(method: string) {
    super(
      `${method}() on the embedded database from inside one of its own transactions: PGlite has one connection, so this would wait forever for the open transaction. Use the transaction (tx), or do the work before or after it.`,
    );
    this.name = 'SingleConnectionDeadlockError';
  }
}

/**
 * Patch `client` (a PGlite instance) in place so that {@link SingleConnectionDeadlockError} is
 * thrown where a statement would wait for a transaction that awaits it (module comment). Costs
 * one AsyncLocalStorage lookup per statement outside transactions and one `run` per transaction.
 */
export function guardSingleConnection(client: PGlite): PGlite {
  const inside = (): boolean => (context.getStore() ?? []).some((o) => o.open && o.client === client);
  const query = client.query.bind(client);
  const exec = client.exec.bind(client);
  const transaction = client.transaction.bind(client);
  client.query = ((...args: Parameters<PGlite['query']>) => (inside() ? Promise.reject(new SingleConnectionDeadlockError('query')) : query(...args))) as PGlite['query'];
  client.exec = (...args: Parameters<PGlite['exec']>) => (inside() ? Promise.reject(new SingleConnectionDeadlockError('exec')) : exec(...args));
  client.transaction = <T>(fn: (tx: Transaction) => Promise<T>): Promise<T> => {
    if (inside()) return Promise.reject(new SingleConnectionDeadlockError('transaction'));
    return transaction((tx) => {
      const open: Open = { client, open: true };
      return context.run([...(context.getStore() ?? []), open], () => fn(tx)).finally(() => {
        open.open = false;
      });
    });
  };
  return client;
}

/** Whether the current async context runs inside an open transaction of a guarded (single-connection) client. */
export function insideTransaction(): boolean {
  return (context.getStore() ?? []).some((o) => o.open);
}

/**
 * Run `fn` as if no transaction were open: for work started from inside a transaction that does
 * not belong to it and is not awaited by it (it then waits for the transaction to end, as any
 * other request does, instead of failing). `fn` runs on a later microtask, so lazy query builders
 * it returns are also started outside.
 */
export function outsideTransaction<T>(fn: () => T | PromiseLike<T>): Promise<T> {
  return context.exit(() => Promise.resolve().then(fn));
}

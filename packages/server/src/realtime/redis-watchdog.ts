/**
 * Liveness of an ioredis connection (docs/operations.md "Faults"). A Redis that is unreachable
 * without closing the connection (frozen, a network partition) answers nothing and ioredis keeps
 * the client `ready`: commands wait forever. {@link watchRedis} PINGs every `intervalMs`; a PING
 * not answered within `timeoutMs` drops the connection and lets ioredis reconnect, so the client
 * leaves `ready` at once — commands without an offline queue then fail fast, rate limiters use
 * their in-memory insurance, and the event bus reports a gap once Redis answers again.
 * {@link connectOrRetry} starts a connection the same way: an instance whose Redis is unreachable
 * when it starts serves degraded and joins when Redis answers.
 */
import type { Redis } from 'ioredis';

export interface WatchOptions {
  intervalMs?: number;
  timeoutMs?: number;
}

/** Watch `client` (see the file comment); returns a function that stops watching. */
export function watchRedis(client: Redis, o: WatchOptions = {}): () => void {
  const timeoutMs = o.timeoutMs ?? 1_000;
  let busy = false;
  const timer = setInterval(() => {
    if (busy || client.status !== 'ready') return;
    busy = true;
    let expire: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      expire = setTimeout(() => reject(new Error(`no PONG within ${timeoutMs} ms`)), timeoutMs);
    });
    Promise.race([client.ping(), timedOut])
      .then(
        () => undefined,
        () => {
          if (client.status === 'ready') client.disconnect(true);
        },
      )
      .finally(() => {
        clearTimeout(expire);
        busy = false;
      });
  }, o.intervalMs ?? 1_000);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * Connect `client` (made with `lazyConnect`) without failing when Redis is unreachable: true once
 * it is ready, false when the first attempt fails — ioredis then goes on reconnecting by itself
 * (its retry strategy) and emits `ready` when Redis answers.
 */
export function connectOrRetry(client: Redis): Promise<boolean> {
  return client.connect().then(
    () => true,
    () => false,
  );
}

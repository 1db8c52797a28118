/**
 * bench/push: the Web Push service double, run as a child process of the bench (its own event
 * loop and CPU, as a push service is another host): an HTTP server on 127.0.0.1 that answers every
 * request 201 once its body has arrived (RFC 8030 §5: "201 Created" for an accepted push; as
 * packages/server/test/push/push-fixtures.ts `ServiceDouble`), and notes when each request's head
 * arrived (epoch ms, {@link epochMs}) and under which path.
 *
 * Protocol over the IPC channel (`fork`): it sends `{type: 'ready', url}` once listening; on
 * `{type: 'await', n, timeoutMs}` it answers `{type: 'arrivals', arrivals, connections}` as soon
 * as `n` requests have arrived since the previous answer (or when `timeoutMs` passes, with what
 * arrived), then forgets them; `{type: 'close'}` closes the server and exits.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A request the double received: its path and when its head arrived (epoch ms). */
export type Arrival = [path: string, at: number];

/** Messages from the bench to the double. */
export type ToDouble = { type: 'await'; n: number; timeoutMs: number } | { type: 'close' };

/** Messages from the double to the bench. `connections`: TCP connections accepted over the same span. */
export type FromDouble = { type: 'ready'; url: string } | { type: 'arrivals'; arrivals: Arrival[]; connections: number };

/** Wall-clock time in ms with sub-millisecond precision, comparable between the bench's processes. */
export const epochMs = (): number => performance.timeOrigin + performance.now();

function main(): void {
  let arrivals: Arrival[] = [];
  let connections = 0;
  let waiting: { n: number; timer: NodeJS.Timeout } | undefined;
  const answer = () => {
    if (waiting) clearTimeout(waiting.timer);
    waiting = undefined;
    process.send!({ type: 'arrivals', arrivals, connections } satisfies FromDouble);
    arrivals = [];
    connections = 0;
  };
  const server = http.createServer((req, res) => {
    arrivals.push([req.url ?? '', epochMs()]);
    req.resume();
    req.on('end', () => {
      res.statusCode = 201;
      res.end();
    });
    if (waiting && arrivals.length >= waiting.n) answer();
  });
  server.on('connection', () => connections++);
  process.on('message', (m: ToDouble) => {
    if (m.type === 'close') {
      server.close(() => process.exit(0));
      server.closeAllConnections();
      return;
    }
    waiting = { n: m.n, timer: setTimeout(answer, m.timeoutMs) };
    if (arrivals.length >= m.n) answer();
  });
  process.on('disconnect', () => process.exit(0));
  server.listen(0, '127.0.0.1', () => {
    process.send!({ type: 'ready', url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` } satisfies FromDouble);
  });
}

if (process.send) main();

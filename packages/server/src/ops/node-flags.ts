/**
 * The Node.js flags the service runs with (`npm start`, `npm run cluster`'s instances and the
 * benchmarks that embed the app; docs/decisions.md "Node flags of the service").
 *
 * `--max-semi-space-size=64` (MiB): V8's young generation may grow to 64 MiB semi-spaces instead
 * of 16. The relay and the room fan-out allocate short-lived objects per frame (parsed frames,
 * decoded blobs, wire objects); with the default size scavenges ran often enough to take 14–16% of
 * the server's CPU and promote objects that die soon after. Measured in bench/relay and
 * bench/rooms (docs/performance.md): about 20% less server CPU per message, for up to ~130 MiB
 * more young-generation memory under load (committed only as the heap grows).
 */
export const SERVICE_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=64'];

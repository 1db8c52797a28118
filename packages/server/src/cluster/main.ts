/**
 * `npm run cluster` (design §8.32): the local cluster of `run.ts` from the environment, until
 * SIGINT / SIGTERM. Needs `npm run build` (the install step does it), PostgreSQL, Redis and
 * HAProxy (`apt-get install -y haproxy`).
 */
import { fileURLToPath } from 'node:url';
import { SERVICE_NODE_FLAGS } from '../ops/node-flags.js';
import { startCluster } from './run.js';

const env = process.env;
const port = Number(env.PORT ?? 8080);
const instances = Number(env.CLUSTER_INSTANCES ?? 2);
if (!Number.isInteger(port) || !Number.isInteger(instances) || instances < 1) {
  console.error('PORT and CLUSTER_INSTANCES must be integers (CLUSTER_INSTANCES >= 1)');
  process.exit(2);
}
const cluster = await startCluster({
  instances,
  host: env.HOST ?? '127.0.0.1',
  port,
  databaseUrl: env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/parley',
  redisUrl: env.REDIS_URL ?? 'redis://127.0.0.1:6379',
  dataDir: env.DATA_DIR ?? './data-cluster',
  command: [process.execPath, ...SERVICE_NODE_FLAGS, fileURLToPath(new URL('../main.js', import.meta.url))],
});
console.log(`Parley cluster: ${cluster.url} (HAProxy) -> ${cluster.instances.map((i) => i.url).join(', ')}`);
let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    if (stopping) return;
    stopping = true;
    void cluster.stop().then(() => process.exit(0));
  });
}

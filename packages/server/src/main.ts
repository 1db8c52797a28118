/**
 * Service entry point (DESIGN §3, §8.32): reads the config once, builds the app, listens on
 * HOST:PORT, logs the effective configuration (secrets masked), optionally serves `/metrics` on
 * a loopback-only `METRICS_PORT`, and on SIGTERM / SIGINT drains: readiness fails at once (load
 * balancers stop sending), new connections are refused, sockets close with 1001, in-flight
 * requests and group commits finish, then the process exits (forced after 10 s).
 *
 * Cold start (issue 14 item 5, docs/performance.md): on the embedded default a new data directory
 * is unpacked from the build's PGlite seed while the app's modules load (`app.js` is imported
 * only after the unpacking has started; the writes run on libuv's thread pool), and route
 * schemas are compiled on first use, the rest in the background once the service listens.
 */
import http from 'node:http';
import path from 'node:path';
import { describeConfig, loadConfig } from './config.js';
import { startCreateFromSeed } from './db/pglite-seed.js';

/** Longest graceful shutdown before the process exits anyway (ms). */
const DRAIN_LIMIT_MS = 10_000;

const config = loadConfig(process.env);
// The directory buildApp opens (app.ts); openDatabase takes over this unpacking when it gets there.
if (!config.databaseUrl && !config.pgliteInMemory) startCreateFromSeed(path.join(config.dataDir, 'pglite'));
const { buildApp } = await import('./app.js');
const app = await buildApp(config);
await app.listen({ host: config.host, port: config.port });
app.log.info({ config: describeConfig(config) }, 'effective configuration');
app.log.info(
  { database: config.databaseUrl ? 'postgresql' : `pglite (${config.dataDir})`, identity: config.oidc ? config.oidc.issuer : 'built-in dev provider' },
  `Parley ${config.version} listening on http://${config.host}:${config.port} (docs: /docs)`,
);

let metricsServer: http.Server | undefined;
if (config.metricsPort !== undefined) {
  const metrics = app.parley.metrics;
  metricsServer = http.createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ detail: 'only GET /metrics here' }));
      return;
    }
    metrics.scrape().then(
      ({ contentType, body }) => res.writeHead(200, { 'content-type': contentType }).end(body),
      (err: unknown) => res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ detail: String(err) })),
    );
  });
  metricsServer.listen(config.metricsPort, '127.0.0.1', () => app.log.info(`metrics on http://127.0.0.1:${config.metricsPort}/metrics`));
}

let closing = false;
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    if (closing) return;
    closing = true;
    app.parley.lifecycle.draining = true;
    app.log.info(`${signal}: draining`);
    setTimeout(() => {
      app.log.error(`shutdown took more than ${DRAIN_LIMIT_MS} ms; exiting`);
      process.exit(1);
    }, DRAIN_LIMIT_MS).unref();
    metricsServer?.close();
    app.close().then(
      () => process.exit(0),
      (err: unknown) => {
        app.log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  });
}

// Last, after the signal handlers are in place (this await lets requests in). Imported here, not
// at the top: only what unpacks the seed loads before the app (see above).
const { compilePendingSchemas } = await import('./http/lazy-schemas.js');
compilePendingSchemas().catch((err: unknown) => app.log.error({ err }, 'a route schema does not compile (that route answers 500)'));

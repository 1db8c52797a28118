/**
 * Service entry point (docs/operations.md "Processes, probes and metrics"): reads the config once, checks what it can before opening
 * anything (ops/preflight.ts: the port is free, the embedded data directory is not held by another
 * process and is locked for this one, a `DATABASE_URL` database answers), builds the app, listens
 * on HOST:PORT, logs the effective configuration (secrets masked), and optionally serves
 * `/metrics` on a loopback-only `METRICS_PORT`.
 *
 * A start that cannot succeed ends with one line on stderr naming the setting to fix
 * (ops/startup-errors.ts) and exit status 1. SIGTERM, SIGINT and SIGHUP (and, under an npm
 * script, the end of npm: ops/stop-signals.ts) stop the service at any moment: during start-up it
 * stops at the next step, closes what it opened and says so; once listening it drains: readiness
 * fails at once (load balancers stop sending), new connections are refused, sockets close with
 * 1001, in-flight requests and group commits finish, then the process exits (forced after 10 s).
 *
 * Cold start (docs/performance.md): on the embedded default a new data directory
 * is unpacked from the build's PGlite seed while the app's modules load (`app.js` is imported
 * only after the unpacking has started; the writes run on libuv's thread pool), and route
 * schemas are compiled on first use, the rest in the background once the service listens.
 */
import http from 'node:http';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { describeConfig, loadConfig, type Config } from './config.js';
import { createFromSeed, startCreateFromSeed } from './db/pglite-seed.js';
import { preflight } from './ops/preflight.js';
import { describeStartupError } from './ops/startup-errors.js';
import { watchStopSignals } from './ops/stop-signals.js';

/** Longest graceful shutdown before the process exits anyway (ms). */
const DRAIN_LIMIT_MS = 10_000;

let logError = (message: string) => console.error(`error: ${message}`);
const signals = watchStopSignals({ forceAfterMs: DRAIN_LIMIT_MS, onForced: () => logError(`stopping took more than ${DRAIN_LIMIT_MS} ms; exiting`) });
signals.onStop((reason) => console.error(`${reason}: stopping start-up`));

/** End the process during start-up after a stop request: close what is open, say so, exit 0. */
async function stopStarting(close?: () => Promise<unknown>): Promise<never> {
  await close?.().catch(() => undefined);
  console.error(`Parley stopped (${signals.requested} during start-up)`);
  process.exit(0);
}

let config: Config | undefined;
let app: FastifyInstance | undefined;
/** The data directory being unpacked from the seed ahead of the app, until the app takes it over. */
let seeding: string | undefined;
/** Close what start-up opened so far: the app, or else a seed unpacking still in flight. */
async function closeStarted(): Promise<void> {
  if (app) await app.close();
  else if (seeding) await createFromSeed(seeding);
}
try {
  config = loadConfig(process.env);
  // Held until the process exits (the lock removes itself then).
  await preflight(config);
  if (signals.requested) await stopStarting();
  if (!config.databaseUrl && !config.pgliteInMemory) {
    // The directory buildApp opens (app.ts); openDatabase takes over this unpacking when it gets there.
    seeding = path.join(config.dataDir, 'pglite');
    startCreateFromSeed(seeding);
  }
  const { buildApp } = await import('./app.js');
  if (signals.requested) await stopStarting(closeStarted);
  const building = buildApp(config);
  seeding = undefined;
  app = await building;
  if (signals.requested) await stopStarting(closeStarted);
  await app.listen({ host: config.host, port: config.port });
} catch (err) {
  // After a stop request, a failing step is part of stopping (e.g. a helper process the same Ctrl-C ended).
  if (signals.requested) await stopStarting(closeStarted);
  await closeStarted().catch(() => undefined);
  console.error(`error: ${describeStartupError(err, config)}`);
  if (/^(debug|trace)$/i.test(process.env.LOG_LEVEL ?? '')) console.error((err as Error)?.stack ?? err);
  process.exit(1);
}
const running = app;
const settings = config;
logError = (message) => running.log.error(message);
running.log.info({ config: describeConfig(settings) }, 'effective configuration');
running.log.info(
  { database: settings.databaseUrl ? 'postgresql' : `pglite (${settings.dataDir})`, identity: settings.oidc ? settings.oidc.issuer : 'built-in dev provider' },
  `Parley ${settings.version} listening on http://${settings.host}:${settings.port} (docs: /docs)`,
);

let metricsServer: http.Server | undefined;
if (settings.metricsPort !== undefined) {
  const metrics = running.parley.metrics;
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
  metricsServer.listen(settings.metricsPort, '127.0.0.1', () => running.log.info(`metrics on http://127.0.0.1:${settings.metricsPort}/metrics`));
}

// A stop requested since the last start-up step (while listen ran) is handled here at once.
signals.onStop((reason) => {
  running.parley.lifecycle.draining = true;
  running.log.info(`${reason}: draining`);
  metricsServer?.close();
  running.close().then(
    () => {
      running.log.info('stopped');
      process.exit(0);
    },
    (err: unknown) => {
      running.log.error({ err }, 'shutdown failed');
      process.exit(1);
    },
  );
});

// Last, after the stop handler is in place (this await lets requests in). Imported here, not
// at the top: only what unpacks the seed loads before the app (see above).
const { compilePendingSchemas } = await import('./http/lazy-schemas.js');
compilePendingSchemas().catch((err: unknown) => running.log.error({ err }, 'a route schema does not compile (that route answers 500)'));

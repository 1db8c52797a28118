/**
 * Service entry point (DESIGN §3): reads the config once, builds the app, listens on HOST:PORT,
 * and drains gracefully on SIGTERM / SIGINT.
 */
import { buildApp } from './app.js';
import { loadConfig } from './config.js';

const config = loadConfig(process.env);
const app = await buildApp(config);
await app.listen({ host: config.host, port: config.port });
app.log.info(
  { database: config.databaseUrl ? 'postgresql' : `pglite (${config.dataDir})`, identity: config.oidc ? config.oidc.issuer : 'built-in dev provider' },
  `Parley ${config.version} listening on http://${config.host}:${config.port} (docs: /docs)`,
);

let closing = false;
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    if (closing) return;
    closing = true;
    app.log.info(`${signal}: draining`);
    app.close().then(
      () => process.exit(0),
      (err: unknown) => {
        app.log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  });
}

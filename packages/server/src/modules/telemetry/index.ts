/**
 * Agent telemetry (contract §4.14): OTLP spans, group-committed per tenant. The area's public
 * surface; `close()` waits for queued span writes.
 */
import { API_PREFIX, type Area, type Platform } from '../../http/area.js';
import { telemetryRoutes } from './routes.js';
import { TelemetryService } from './service.js';

export { insertSpans } from './repo.js';

/** Span ingest and queries. */
export function createTelemetry(d: Pick<Platform, 'db' | 'config' | 'writer'>): Area {
  const telemetry = new TelemetryService({ db: d.db, writer: d.writer, listDefault: d.config.limits.listDefault, listMax: d.config.limits.listMax });
  return {
    async routes(app) {
      await app.register(telemetryRoutes, { prefix: API_PREFIX, telemetry });
    },
    close: () => telemetry.drain(),
  };
}

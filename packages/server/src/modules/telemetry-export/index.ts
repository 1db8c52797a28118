/**
 * Telemetry export (contract §4.14): each tenant's OTLP endpoint and the worker sending its spans
 * there. The area's public surface.
 */
import { API_PREFIX, type Area, type Platform } from '../../http/area.js';
import { telemetryExportRoutes } from './routes.js';
import { TelemetryExportService } from './service.js';
import { TelemetryExportWorker } from './worker.js';

/** Export settings routes and the export worker (started with the app). */
export function createTelemetryExport(d: Pick<Platform, 'db' | 'config' | 'secrets' | 'log'>): Area {
  const worker = new TelemetryExportWorker(d.db, d.config.webhooks, d.secrets, d.log);
  return {
    async routes(app) {
      await app.register(telemetryExportRoutes, { prefix: API_PREFIX, telemetryExport: new TelemetryExportService(d.db, d.secrets, d.config.webhooks) });
    },
    start: () => worker.start(),
    close: () => worker.stop(),
  };
}

/**
 * Telemetry: OTLP/HTTP ingest, span queries, summary, dashboard (SPEC §2.15, §4.14; DESIGN §8.18): schemas, route rows and frames.
 */

/** Route rows of this area (filled as the area moves into the contract). */
export const telemetryRoutes = {};

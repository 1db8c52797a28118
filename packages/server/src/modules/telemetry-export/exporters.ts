/**
 * The official OTLP/HTTP exporters of each tenant's endpoint (docs/decisions.md "Telemetry
 * export"): `OTLPTraceExporter` (@opentelemetry/exporter-trace-otlp-http, spans to
 * `<url>/v1/traces`) and `OTLPLogExporter` (@opentelemetry/exporter-logs-otlp-http, audit events
 * to `<url>/v1/logs`), both OTLP JSON, with the tenant's headers. One pair per tenant, cached
 * while its setting is unchanged (`updated_at`) and shut down when it changes or is removed.
 *
 * SSRF guard (the webhooks' one, modules/webhooks/target.ts): the URL passes `webhookUrlProblem`
 * before every export (scheme, userinfo, IP-literal hosts), and the exporters' HTTP agent resolves
 * host names with `guardedLookup`, so a name resolving to a non-public address is refused at
 * connect time and the socket connects only to the checked addresses (no DNS rebinding window).
 */
import type { ExportResult } from '@opentelemetry/core';
import { OTLPLogExporter } from '@opentelemetry/exporter-logs-otlp-http';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import type { ReadableLogRecord } from '@opentelemetry/sdk-logs';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import type { SecretBox } from '../../lib/secret-box.js';
import { BlockedTargetError, guardedLookup, webhookUrlProblem, type TargetPolicy } from '../webhooks/index.js';
import type { ExportSettingRow } from './repo.js';
import { openHeaders } from './secrets.js';

/** The export endpoint's URL of one signal: `<url>/v1/traces` or `<url>/v1/logs` (the OTLP/HTTP paths), a trailing slash ignored. */
export const signalUrl = (base: string, signal: 'traces' | 'logs'): string => `${base.replace(/\/+$/, '')}/v1/${signal}`;

/**
 * The environment variables the exporters' constructors read headers from (the platform's own
 * OTLP settings, if an operator set them for other tooling). Their values must never reach a
 * tenant's endpoint.
 */
const ENV_HEADERS = ['OTEL_EXPORTER_OTLP_HEADERS', 'OTEL_EXPORTER_OTLP_TRACES_HEADERS', 'OTEL_EXPORTER_OTLP_LOGS_HEADERS'];

/**
 * Run `build` (synchronous: nothing else runs meanwhile) with {@link ENV_HEADERS} hidden: the
 * official exporters merge headers from these variables under the configured ones at construction
 * (otlp-exporter-base `convertLegacyHttpOptions`), which would send the platform's own OTLP
 * credentials to every tenant. The URL and the TLS files of the environment are not used: the
 * URL and the HTTP agent are always given.
 */
export function withoutEnvHeaders<T>(build: () => T): T {
  const saved = ENV_HEADERS.map((k) => [k, process.env[k]] as const);
  for (const k of ENV_HEADERS) delete process.env[k];
  try {
    return build();
  } finally {
    for (const [k, v] of saved) if (v !== undefined) process.env[k] = v;
  }
}

/** A tenant's exporter pair. */
interface Pair {
  updatedAt: number;
  /** When it last exported (ms since the epoch): idle pairs are shut down by {@link TenantExporters.closeIdle}. */
  usedAt: number;
  url: string;
  traces: OTLPTraceExporter;
  logs: OTLPLogExporter;
}

/** Options of {@link TenantExporters}: the webhook target policy plus the export timeout (ms). */
export interface ExporterOptions extends TargetPolicy {
  timeoutMs: number;
}

/** Calls an exporter's callback-style `export()` as a promise. */
function exportWith<T>(exporter: { export(items: T[], cb: (r: ExportResult) => void): void }, items: T[]): Promise<ExportResult> {
  return new Promise((resolve) => exporter.export(items, resolve));
}

/** Per-tenant OTLP exporters, created on first use and replaced when the tenant's setting changes. */
export class TenantExporters {
  private readonly pairs = new Map<string, Pair>();

  constructor(
    private readonly box: SecretBox,
    private readonly opts: ExporterOptions,
  ) {}

  /**
   * The exporter pair of `setting` (its headers opened here).
   * @throws BlockedTargetError when the URL is not allowed under the current policy.
   * @throws SecretBoxError when the headers do not open.
   */
  private pairOf(setting: ExportSettingRow): Pair {
    if (webhookUrlProblem(setting.url, this.opts) !== undefined) throw new BlockedTargetError('blocked url');
    const cached = this.pairs.get(setting.tenantId);
    if (cached && cached.updatedAt === setting.updatedAt.getTime()) {
      cached.usedAt = Date.now();
      return cached;
    }
    if (cached) void this.close(setting.tenantId);
    const headers = openHeaders(this.box, setting.tenantId, setting.headers);
    const common = {
      headers,
      timeoutMillis: this.opts.timeoutMs,
      httpAgentOptions: { keepAlive: true, lookup: guardedLookup(this.opts.allowPrivate) },
    };
    const pair: Pair = withoutEnvHeaders(() => ({
      updatedAt: setting.updatedAt.getTime(),
      usedAt: Date.now(),
      url: setting.url,
      traces: new OTLPTraceExporter({ ...common, url: signalUrl(setting.url, 'traces') }),
      logs: new OTLPLogExporter({ ...common, url: signalUrl(setting.url, 'logs') }),
    }));
    this.pairs.set(setting.tenantId, pair);
    return pair;
  }

  /** Export spans to the tenant's endpoint; answers the exporter's result (never throws for a failed export). */
  exportSpans(setting: ExportSettingRow, spans: ReadableSpan[]): Promise<ExportResult> {
    return exportWith(this.pairOf(setting).traces, spans);
  }

  /** Export log records to the tenant's endpoint; answers the exporter's result. */
  exportLogs(setting: ExportSettingRow, records: ReadableLogRecord[]): Promise<ExportResult> {
    return exportWith(this.pairOf(setting).logs, records);
  }

  /** Shut down and forget a tenant's exporters (its setting changed or was removed). */
  async close(tenantId: string): Promise<void> {
    const pair = this.pairs.get(tenantId);
    if (!pair) return;
    this.pairs.delete(tenantId);
    await Promise.allSettled([pair.traces.shutdown(), pair.logs.shutdown()]);
  }

  /**
   * Shut down the pairs unused for `idleMs` (a removed setting, a tenant gone quiet): they are
   * built again on the next export. Answers how many were closed.
   */
  async closeIdle(idleMs: number, now = Date.now()): Promise<number> {
    const idle = [...this.pairs].filter(([, p]) => now - p.usedAt >= idleMs).map(([t]) => t);
    await Promise.all(idle.map((t) => this.close(t)));
    return idle.length;
  }

  /** Shut down every tenant's exporters (worker stop). */
  async closeAll(): Promise<void> {
    await Promise.all([...this.pairs.keys()].map((t) => this.close(t)));
  }
}

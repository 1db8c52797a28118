/**
 * The tenant's telemetry export endpoint (`PUT/GET/DELETE /settings/telemetry-export`,
 * docs/decisions.md "Telemetry export"). Owner only, under the tenant's RLS. The URL must pass the
 * webhook target policy (`webhookUrlProblem`: https unless WEBHOOK_ALLOW_HTTP, no userinfo, no
 * non-public IP literal unless WEBHOOK_ALLOW_PRIVATE); header values are sealed at rest with the
 * secrets key and never answered back (only their names). Every change is audited
 * (`settings.updated`, data `{keys: ['telemetry_export'], …}`, no header values).
 */
import type { TelemetryExportRequest, TelemetryExportSetting } from '@parley/protocol';
import type { Db, Tx } from '../../db/client.js';
import { withTenant } from '../../db/tenant.js';
import { badRequest, notFound } from '../../lib/errors.js';
import type { SecretBox } from '../../lib/secret-box.js';
import { appendAudit } from '../audit/index.js';
import { webhookUrlProblem, type TargetPolicy } from '../webhooks/index.js';
import { sealHeaders } from './secrets.js';
import * as repo from './repo.js';

/** Headers the exporter sets itself or the connection owns; an endpoint may not set them. */
const RESERVED_HEADERS = new Set(['content-type', 'content-length', 'content-encoding', 'host', 'connection', 'transfer-encoding', 'keep-alive', 'te', 'upgrade', 'expect']);

/** The 400 detail of a header set that may not be used, or undefined. */
function headersProblem(headers: Record<string, string>): string | undefined {
  const seen = new Set<string>();
  for (const name of Object.keys(headers)) {
    const lower = name.toLowerCase();
    if (RESERVED_HEADERS.has(lower)) return `header ${name} may not be set`;
    if (seen.has(lower)) return `header ${name} is given twice`;
    seen.add(lower);
  }
  return undefined;
}

const EXPORT_KEY = 'telemetry_export';

export class TelemetryExportService {
  /** `policy`: the webhook target policy (config.webhooks); `secrets` seals the header values. */
  constructor(
    private readonly db: Db,
    private readonly secrets: SecretBox,
    private readonly policy: TargetPolicy,
  ) {}

  /** The tenant's endpoint (header names only) and backlog. @throws 404 when none is set. */
  get(tenantId: string): Promise<TelemetryExportSetting> {
    return withTenant(this.db, tenantId, async (tx) => {
      const row = await repo.getSetting(tx, tenantId);
      if (!row) throw notFound('telemetry export');
      return this.toOut(tx, row);
    });
  }

  /**
   * Set or replace the endpoint in one transaction (setting + audit event). Spans and audit events
   * written from this commit on are exported; a backlog of a previous endpoint goes to the new one.
   * @throws 400 for a URL the target policy refuses or a reserved / duplicate header.
   */
  set(tenantId: string, actor: string, body: TelemetryExportRequest): Promise<TelemetryExportSetting> {
    const headers = body.headers ?? {};
    const problem = webhookUrlProblem(body.url, this.policy, 'export url') ?? headersProblem(headers);
    if (problem) throw badRequest(problem);
    const headerNames = Object.keys(headers).sort();
    return withTenant(this.db, tenantId, async (tx) => {
      const row = await repo.upsertSetting(tx, { tenantId, url: body.url, headers: sealHeaders(this.secrets, tenantId, headers), headerNames, updatedBy: actor });
      await appendAudit(tx, tenantId, { type: 'settings.updated', actor, data: { keys: [EXPORT_KEY], header_names: headerNames } });
      return this.toOut(tx, row);
    });
  }

  /** Remove the endpoint and drop its backlog (one transaction, audited). @throws 404 when none is set. */
  remove(tenantId: string, actor: string): Promise<void> {
    return withTenant(this.db, tenantId, async (tx) => {
      if (!(await repo.deleteSetting(tx, tenantId))) throw notFound('telemetry export');
      await appendAudit(tx, tenantId, { type: 'settings.updated', actor, data: { keys: [EXPORT_KEY], removed: true } });
    });
  }

  private async toOut(tx: Tx, row: repo.ExportSettingRow): Promise<TelemetryExportSetting> {
    const b = await repo.backlog(tx, row.tenantId);
    return { url: row.url, header_names: row.headerNames, updated_at: row.updatedAt.toISOString(), pending: b.pending, last_error: b.lastError };
  }
}

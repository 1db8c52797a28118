/**
 * Export header values at rest (docs/decisions.md "Telemetry export"):
 * `telemetry_export_settings.headers` holds the JSON object of the endpoint's headers sealed with
 * AES-256-GCM under the secrets key ({@link SecretBox}, the webhook secrets' box), bound to the
 * tenant id (a sealed value copied to another tenant does not open).
 */
import { and, eq, isNotNull } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { telemetryExportSettings } from '../../db/schema/index.js';
import { crossTenant } from '../../db/tenant.js';
import type { SecretBox } from '../../lib/secret-box.js';
import { resealRows, type ResealReport } from '../../lib/reseal.js';

const context = (tenantId: string) => `telemetry_export_settings.headers:${tenantId}`;

/** The stored (sealed) form of a tenant's export headers; null when there are none. */
export function sealHeaders(box: SecretBox, tenantId: string, headers: Record<string, string>): string | null {
  return Object.keys(headers).length === 0 ? null : box.seal(JSON.stringify(headers), context(tenantId));
}

/** The clear headers of a stored setting. @throws SecretBoxError when the sealed value does not open (other key, altered, other tenant). */
export function openHeaders(box: SecretBox, tenantId: string, sealed: string | null): Record<string, string> {
  return sealed === null ? {} : (JSON.parse(box.open(sealed, context(tenantId))) as Record<string, string>);
}

/**
 * Re-seal every tenant's export headers under the current key of `box` (the secrets-key rotation,
 * `npm run cli -- reseal-secrets`, with the webhook secrets): a value that opens only under a
 * previous key is sealed again. A row is updated only if it still holds the value read (a `PUT`
 * in between wins). Across tenants (a platform maintenance task).
 */
export async function resealExportHeaders(db: Db, box: SecretBox): Promise<ResealReport> {
  const reason = "secrets-key rotation: re-seal every tenant's telemetry export headers";
  const t = telemetryExportSettings;
  const rows = await crossTenant(db, reason, (tx) => tx.select({ tenantId: t.tenantId, headers: t.headers }).from(t).where(isNotNull(t.headers)));
  return resealRows(
    rows,
    (row) => box.reseal(row.headers!, context(row.tenantId)),
    (row, next) => crossTenant(db, reason, (tx) => tx.update(t).set({ headers: next }).where(and(eq(t.tenantId, row.tenantId), eq(t.headers, row.headers!)))),
  );
}

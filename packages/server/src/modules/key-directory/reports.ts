/**
 * Reports of key-transparency failures (design §8.39): a client that refused a key whose proof
 * failed, or that found a key in its own name it did not publish, tells its owners. The report is
 * an audit event (`key_directory.alert`) and the `key_directory_alert` socket event to the
 * tenant's owner devices, which the push trigger also sends to their phones and browsers.
 */
import type { KeyDirectoryAlertEvent, KeyDirectoryReportRequest } from '@parley/protocol';
import type { Db } from '../../db/client.js';
import { withTenant } from '../../db/tenant.js';
import type { Principal } from '../../auth/authenticator.js';
import type { Notifier } from '../../realtime/notifier.js';
import { appendAudit, auditActor } from '../audit/index.js';

export class KeyDirectoryReports {
  constructor(
    private readonly db: Db,
    private readonly notifier: Notifier,
  ) {}

  /** Record `body` from `deviceId` of `tenantId` in the audit log, then tell the tenant's owners. */
  async report(principal: Principal, tenantId: string, deviceId: string | null, body: KeyDirectoryReportRequest): Promise<void> {
    const event: KeyDirectoryAlertEvent = { label: body.label, reason: body.reason, detail: body.detail, device_id: deviceId, reported_at: new Date().toISOString() };
    await withTenant(this.db, tenantId, (tx) =>
      appendAudit(tx, tenantId, { type: 'key_directory.alert', actor: auditActor(principal), subject: body.label, data: { reason: body.reason, detail: body.detail, device_id: deviceId } }),
    );
    await this.notifier.toOwners(tenantId, 'key_directory_alert', event);
  }
}

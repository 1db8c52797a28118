/**
 * Scheduled job: marks lapsed `active` invites `expired` (contract §3.2). Expiry is also enforced at
 * read and use time (invites/service.ts `effectiveStatus`), so this job only keeps stored state
 * tidy; missing a run changes no answer.
 */
import type { Metrics } from '../lib/metrics.js';
import { every } from './every.js';
import type { Db } from '../db/client.js';
import { crossTenant } from '../db/tenant.js';
import { expireLapsed } from '../modules/invites/repo.js';

/** Run once; returns how many invites were marked. */
export async function expireInvites(db: Db, now = new Date()): Promise<number> {
  const rows = await crossTenant(db, 'maintenance: invite expiry across tenants', (tx) => expireLapsed(tx, now));
  return rows.length;
}

/** Run every `intervalMs`; returns a stop function. Errors are logged, never thrown. */
export function scheduleInviteExpiry(db: Db, intervalMs: number, onError: (err: unknown) => void, metrics?: Metrics): () => void {
  return every('invite_expiry', intervalMs, () => expireInvites(db), onError, metrics);
}

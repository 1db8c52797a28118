/**
 * Invites (contract §2.2, §3.2): single use, 10-minute expiry enforced whenever an invite is read or
 * used (a lapsed `active` invite is `expired` even before the expiry job has run), revoke 409 when
 * not active, soft delete of ended invites. The raw `svc_tok_` token is returned once; only its
 * BLAKE2b-256 hash is stored.
 */
import { randomUUID } from 'node:crypto';
import type { CreatedInvite, Invite, InviteStatus } from '@parley/protocol';
import type { Db, Tx } from '../../db/client.js';
import { withTenant } from '../../db/tenant.js';
import { appendAudit } from '../audit/index.js';
import { hashSecret, randomToken } from '../../lib/crypto.js';
import { conflict, notFound } from '../../lib/errors.js';
import * as repo from './repo.js';

export const INVITE_TOKEN_PREFIX = 'svc_tok_';

/** The state of an invite at `now`: `active` past its expiry reads as `expired`. */
export function effectiveStatus(row: Pick<repo.InviteRow, 'status' | 'expiresAt'>, now = new Date()): InviteStatus {
  if (row.status === 'active' && row.expiresAt.getTime() <= now.getTime()) return 'expired';
  return row.status as InviteStatus;
}

export function toInvite(row: repo.InviteRow): Invite {
  return {
    id: row.id,
    status: effectiveStatus(row),
    label: row.label,
    created_at: row.createdAt.toISOString(),
    expires_at: row.expiresAt.toISOString(),
    consumed_at: row.consumedAt?.toISOString() ?? null,
    device_id: row.deviceId,
  };
}

export class InviteService {
  constructor(
    private readonly db: Db,
    private readonly ttlMs: number,
  ) {}

  /** Create an invite; the answer carries the raw token, which is never stored or shown again. */
  async create(tenantId: string, createdBy: string, label?: string): Promise<CreatedInvite> {
    const token = randomToken(INVITE_TOKEN_PREFIX);
    const [row] = await withTenant(this.db, tenantId, async (tx) => {
      const inserted = await repo.insertInvite(tx, {
        id: randomUUID(),
        tenantId,
        tokenHash: hashSecret(token),
        label: label ?? null,
        createdBy,
        expiresAt: new Date(Date.now() + this.ttlMs),
      });
      await appendAudit(tx, tenantId, { type: 'invite.created', actor: createdBy, subject: inserted[0]!.id, data: { label: label ?? null } });
      return inserted;
    });
    return { ...toInvite(row!), token };
  }

  list(tenantId: string): Promise<Invite[]> {
    return withTenant(this.db, tenantId, async (tx) => (await repo.listInvites(tx)).map(toInvite));
  }

  /** active -> revoked; 409 for any other state (consumed, expired, revoked). */
  revoke(tenantId: string, id: string, actor = 'owner'): Promise<Invite> {
    return withTenant(this.db, tenantId, async (tx) => {
      const row = await this.mustGet(tx, id);
      const status = effectiveStatus(row);
      if (status !== 'active') throw conflict(`invite is ${status}; only an active invite can be revoked`);
      const [updated] = await repo.updateInvite(tx, id, { status: 'revoked', revokedAt: new Date() });
      await appendAudit(tx, tenantId, { type: 'invite.revoked', actor, subject: id });
      return toInvite(updated!);
    });
  }

  /** Soft-delete a revoked, consumed or expired invite; 409 while it is active. */
  remove(tenantId: string, id: string): Promise<void> {
    return withTenant(this.db, tenantId, async (tx) => {
      const row = await this.mustGet(tx, id);
      if (effectiveStatus(row) === 'active') throw conflict('an active invite must be revoked before it is deleted');
      await repo.updateInvite(tx, id, { deletedAt: new Date() });
    });
  }

  private async mustGet(tx: Tx, id: string): Promise<repo.InviteRow> {
    const row = await repo.getInvite(tx, id, true);
    if (!row) throw notFound('invite');
    return row;
  }
}

/**
 * The audit log as a verifiable transparency log (design §8.33): signed checkpoints of each
 * tenant's Merkle tree (tree.ts), inclusion proofs of its events and consistency proofs between
 * its checkpoints. A checkpoint is a C2SP signed note:
 *
 *     <host>/audit/<tenant_id>
 *     <tree size>
 *     <root hash, base64>
 *     timestamp <ISO 8601, when it was signed>
 *
 *     — <host>/audit-log <base64(key id || Ed25519 signature)>
 *
 * Every checkpoint answered is kept (`audit_checkpoints`, one per size and signing key), and the
 * log never signs two roots for one size: a size signed again (after a key rotation) must give
 * the root already signed. Proofs are served for the sizes of kept checkpoints only, so an owner
 * can always be handed the signed root a proof leads to. The scheduled job ({@link publishCheckpoints})
 * signs one for every tenant whose log grew since its last one.
 */
import type { AuditCheckpoint, AuditConsistencyProof, AuditEventProof, AuditLogKey } from '@parley/protocol';
import { and, desc, eq, inArray, sql } from 'drizzle-orm';
import type { Db, Tx } from '../../db/client.js';
import { auditCheckpoints, auditEvents } from '../../db/schema/index.js';
import { crossTenant, withTenant } from '../../db/tenant.js';
import { badRequest, notFound } from '../../lib/errors.js';
import type { AuditLogKeys, LogSigner } from '../../keys/index.js';
import * as repo from './repo.js';
import { toOut } from './service.js';
import * as tree from './tree.js';

type CheckpointRow = typeof auditCheckpoints.$inferSelect;

const checkpointOut = (r: CheckpointRow): AuditCheckpoint => ({ tree_size: r.treeSize, root_hash: r.rootHash.toString('base64'), created_at: r.createdAt.toISOString(), checkpoint: r.note });
const b64 = (h: Buffer) => h.toString('base64');

export class AuditTransparency {
  constructor(
    private readonly db: Db,
    private readonly keys: AuditLogKeys,
  ) {}

  /**
   * The kept checkpoint of `size` signed by the active key, signed and kept now when there is none.
   * @throws Error when the tree's root at `size` is not the root already signed for that size.
   */
  private async checkpointAt(tx: Tx, signer: LogSigner, tenantId: string, size: number): Promise<CheckpointRow> {
    const signed = await tx
      .select()
      .from(auditCheckpoints)
      .where(and(eq(auditCheckpoints.tenantId, tenantId), eq(auditCheckpoints.treeSize, size)))
      .orderBy(desc(auditCheckpoints.createdAt));
    const mine = signed.find((r) => r.keyId === signer.keyId);
    if (mine) return mine;
    const root = await tree.rootAt(tx, tenantId, size);
    if (signed[0] && !signed[0].rootHash.equals(root)) throw new Error(`audit log of tenant ${tenantId}: the tree's root at size ${size} is not the one signed before`);
    const createdAt = new Date();
    const note = signer.sign(`${signer.origin(tenantId)}\n${size}\n${b64(root)}\ntimestamp ${createdAt.toISOString()}\n`);
    const [inserted] = await tx.insert(auditCheckpoints).values({ tenantId, treeSize: size, keyId: signer.keyId, rootHash: root, note, createdAt }).onConflictDoNothing().returning();
    if (inserted) return inserted;
    // Signed by a concurrent request meanwhile: answer the one kept.
    const [kept] = await tx.select().from(auditCheckpoints).where(and(eq(auditCheckpoints.tenantId, tenantId), eq(auditCheckpoints.treeSize, size), eq(auditCheckpoints.keyId, signer.keyId)));
    return kept!;
  }

  /** `GET /audit/log-key`: the key that signs the checkpoints. */
  logKey(): Promise<AuditLogKey> {
    return this.keys.info();
  }

  /** `GET /audit/checkpoint`: the checkpoint over every event committed before the call. */
  async latest(tenantId: string): Promise<AuditCheckpoint> {
    const signer = await this.keys.signer();
    return withTenant(this.db, tenantId, async (tx) => checkpointOut(await this.checkpointAt(tx, signer, tenantId, (await repo.lastLink(tx, tenantId))?.seq ?? 0)));
  }

  /** 400 unless a checkpoint of each size was answered before. */
  private async requireKept(tx: Tx, tenantId: string, sizes: number[]): Promise<void> {
    const kept = await tx
      .selectDistinct({ size: auditCheckpoints.treeSize })
      .from(auditCheckpoints)
      .where(and(eq(auditCheckpoints.tenantId, tenantId), inArray(auditCheckpoints.treeSize, sizes)));
    const missing = sizes.find((s) => !kept.some((k) => k.size === s));
    if (missing !== undefined) throw badRequest(`no checkpoint of tree size ${missing} was answered; ask GET /audit/checkpoint for one`);
  }

  /**
   * `GET /audit/events/{id}/proof`: the event, its leaf and audit path in the tree of `treeSize`
   * leaves (a kept checkpoint's size; default: the latest, signed now if need be) and that checkpoint.
   * @throws 404 unknown event; 400 a size without a kept checkpoint or that does not contain the event.
   */
  async eventProof(tenantId: string, eventId: string, treeSize?: number): Promise<AuditEventProof> {
    const signer = await this.keys.signer();
    return withTenant(this.db, tenantId, async (tx) => {
      const [event] = await tx.select().from(auditEvents).where(and(eq(auditEvents.tenantId, tenantId), eq(auditEvents.id, eventId)));
      if (!event) throw notFound('audit event');
      let size = treeSize;
      if (size === undefined) size = (await repo.lastLink(tx, tenantId))?.seq ?? 0;
      else await this.requireKept(tx, tenantId, [size]);
      if (event.seq > size) throw badRequest(`the tree of size ${size} does not contain this event (its leaf index is ${event.seq - 1})`);
      const checkpoint = await this.checkpointAt(tx, signer, tenantId, size);
      const { leaf, path } = await tree.inclusionProof(tx, tenantId, event.seq - 1, size);
      return {
        event_id: event.id,
        leaf_index: event.seq - 1,
        tree_size: size,
        leaf_hash: b64(leaf),
        audit_path: path.map(b64),
        checkpoint: checkpoint.note,
        event: toOut(event),
      };
    });
  }

  /**
   * `GET /audit/consistency`: the proof that the tree of `second` leaves extends the one of `first`.
   * @throws 400 unless 1 <= first <= second and both sizes have kept checkpoints.
   */
  consistency(tenantId: string, first: number, second: number): Promise<AuditConsistencyProof> {
    if (first < 1 || first > second) throw badRequest('first must be at least 1 and at most second');
    return withTenant(this.db, tenantId, async (tx) => {
      await this.requireKept(tx, tenantId, [first, second]);
      return { first, second, proof: (await tree.consistencyProof(tx, tenantId, first, second)).map(b64) };
    });
  }

  /**
   * The scheduled publication: a checkpoint for every tenant whose log has grown past its newest
   * kept checkpoint (or has events and none yet). One transaction per tenant.
   * @returns how many tenants were looked at and how many checkpoints were signed.
   */
  async publishCheckpoints(): Promise<{ tenants: number; signed: number }> {
    const rows = await crossTenant(this.db, 'the checkpoint job visits every tenant', (tx) =>
      tx.execute(sql`
        select t.id as tenant_id,
          coalesce((select e.seq from audit_events e where e.tenant_id = t.id order by e.seq desc limit 1), 0)::float8 as size,
          coalesce((select max(c.tree_size) from audit_checkpoints c where c.tenant_id = t.id), -1)::float8 as kept
        from tenants t`),
    );
    const all = (rows as unknown as { rows: { tenant_id: string; size: number; kept: number }[] }).rows;
    const due = all.filter((r) => r.size > 0 && r.size > r.kept);
    const signer = await this.keys.signer();
    for (const r of due) await withTenant(this.db, r.tenant_id, (tx) => this.checkpointAt(tx, signer, r.tenant_id, r.size));
    return { tenants: all.length, signed: due.length };
  }
}

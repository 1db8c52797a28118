/**
 * Disputes (contract §2.13, §3.6, §4.16; design §8.9, §8.24, §8.25, §8.35). Either party files one on
 * an active or suspended rental (`active | suspended -> disputed`, its SPT revoked) with a reason
 * and evidence references — trace ids (`telemetry_spans.trace_id`) and audit event ids, each of
 * which must exist in one of the two tenants (checked in each tenant's own scope, so nothing of a
 * third tenant can be named) — and both add notes. A platform operator lists and resolves it:
 * `refund` gives back what is left of the charge, `partial` the given amount, `none` nothing; the
 * money moves through the processor and the ledger in the resolving transaction and the rental
 * becomes `resolved`. Every read and write by an operator is audited in both tenants' chains.
 * Operators see the evidence references, never message content.
 */
import { randomUUID } from 'node:crypto';
import type { Dispute, DisputeListQuery, DisputeNote as DisputeNoteOut, DisputeNoteRequest, DisputePage, EvidenceRef, FileDisputeRequest, ResolveDisputeRequest } from '@parley/protocol';
import { and, asc, desc, eq, lt, or, sql } from 'drizzle-orm';
import type { Db, Tx } from '../../db/client.js';
import { marketplaceDisputeNotes as N, marketplaceDisputes as D } from '../../db/schema/index.js';
import { crossTenant, switchTenant, withTenant } from '../../db/tenant.js';
import { badRequest, conflict, forbidden, notFound } from '../../lib/errors.js';
import { decodeKeyset, encodeKeyset, pageLimit } from '../../lib/paging.js';
import type { Notifier } from '../../realtime/notifier.js';
import { appendAuditToParties, lockChains, twoPartyEvents } from '../audit/index.js';
import type { MarketCaller } from './caller.js';
import * as rentalsRepo from './rentals-repo.js';
import type { RentalService } from './rentals.js';

type DisputeRow = typeof D.$inferSelect;
type NoteRow = typeof N.$inferSelect;

/** A platform operator (design §8.25): its identity-provider subject. */
export interface Operator {
  sub: string;
}

const toNote = (n: NoteRow): DisputeNoteOut => ({ author_tenant_id: n.authorTenantId, note: n.note, evidence_refs: n.evidenceRefs as EvidenceRef[], created_at: n.createdAt.toISOString() });

function toDispute(d: DisputeRow, notes: NoteRow[]): Dispute {
  return {
    dispute_id: d.id,
    rental_id: d.rentalId,
    renter_tenant_id: d.tenantId,
    developer_tenant_id: d.partnerTenantId,
    filed_by_tenant_id: d.filedByTenantId,
    status: d.status as Dispute['status'],
    reason: d.reason,
    evidence_refs: d.evidenceRefs as EvidenceRef[],
    notes: notes.map(toNote),
    outcome: (d.outcome as Dispute['outcome']) ?? null,
    amount_cents: d.amountCents,
    resolution_note: d.resolutionNote,
    created_at: d.createdAt.toISOString(),
    resolved_at: d.resolvedAt?.toISOString() ?? null,
  };
}

const notesOf = (tx: Tx, id: string) => tx.select().from(N).where(eq(N.disputeId, id)).orderBy(asc(N.createdAt), asc(N.id));

/** Whether `ref` names a trace or an audit event of `tenantId` (`tx` switched to that scope). */
async function existsIn(tx: Tx, ref: EvidenceRef): Promise<boolean> {
  if (ref.type === 'trace') {
    if (!/^[0-9a-f]{32}$/i.test(ref.id)) return false;
    const res = (await tx.execute(sql`select 1 from telemetry_spans where trace_id = ${ref.id.toLowerCase()} limit 1`)) as unknown as { rows: unknown[] };
    return res.rows.length > 0;
  }
  if (!/^[0-9a-f-]{36}$/i.test(ref.id)) return false;
  const res = (await tx.execute(sql`select 1 from audit_events where id = ${ref.id.toLowerCase()}::uuid limit 1`)) as unknown as { rows: unknown[] };
  return res.rows.length > 0;
}

/**
 * Check every evidence reference against the two tenants (each in its own RLS scope; `tx` is
 * back in `home`'s scope afterwards). @throws 400 naming the first reference found in neither.
 */
async function checkEvidence(tx: Tx, refs: EvidenceRef[], parties: [string, string], home: string): Promise<void> {
  for (const ref of refs) {
    let found = false;
    for (const t of parties) {
      await switchTenant(tx, t);
      if (await existsIn(tx, ref)) {
        found = true;
        break;
      }
    }
    await switchTenant(tx, home);
    if (!found) throw badRequest(`evidence ${ref.type} ${ref.id} exists in neither tenant of the rental`);
  }
}

export class DisputeService {
  constructor(private readonly deps: { db: Db; rentals: RentalService; notifier: Notifier; listDefault: number; listMax: number }) {}

  /** File a dispute on a rental (either party): active | suspended -> disputed. @throws 404; 409 other states or one exists; 400 foreign evidence. */
  async file(c: MarketCaller, rentalId: string, input: FileDisputeRequest): Promise<Dispute> {
    const refs = input.evidence_refs ?? [];
    const out = await withTenant(this.deps.db, c.tenantId, async (tx) => {
      const peek = await rentalsRepo.getRental(tx, rentalId);
      if (!peek) throw notFound('rental');
      await lockChains(tx, [peek.tenantId, peek.partnerTenantId]);
      const r = (await rentalsRepo.getRental(tx, rentalId, true))!;
      if (r.status !== 'active' && r.status !== 'suspended') throw conflict(`only an active or suspended rental can be disputed; this one is ${r.status}`);
      await checkEvidence(tx, refs, [r.tenantId, r.partnerTenantId], c.tenantId);
      const [d] = await tx
        .insert(D)
        .values({ id: randomUUID(), tenantId: r.tenantId, partnerTenantId: r.partnerTenantId, rentalId: r.id, filedByTenantId: c.tenantId, filedBy: c.actor, reason: input.reason, evidenceRefs: refs })
        .returning();
      await switchTenant(tx, r.tenantId);
      await this.deps.rentals.revokeGrant(tx, r, 'disputed');
      await rentalsRepo.updateRental(tx, r.id, { status: 'disputed', reason: 'disputed' });
      await switchTenant(tx, c.tenantId);
      const other = c.tenantId === r.tenantId ? r.partnerTenantId : r.tenantId;
      await appendAuditToParties(tx, c.tenantId, twoPartyEvents(c.tenantId, other, c.actor, { type: 'dispute.filed', subject: d!.id, data: { rental_id: r.id, evidence: refs.length } }));
      return { dispute: toDispute(d!, []), rental: { ...r, status: 'disputed', reason: 'disputed' } };
    });
    await this.deps.rentals.notify(out.rental, 'active');
    await this.notify(out.dispute);
    return out.dispute;
  }

  /** Add a note and evidence (either party, open disputes). @throws 404; 409 resolved; 400 foreign evidence. */
  async addNote(c: MarketCaller, id: string, input: DisputeNoteRequest): Promise<Dispute> {
    const refs = input.evidence_refs ?? [];
    return withTenant(this.deps.db, c.tenantId, async (tx) => {
      const [d] = await tx.select().from(D).where(eq(D.id, id)).for('update');
      if (!d) throw notFound('dispute');
      if (d.status !== 'open') throw conflict('the dispute is resolved');
      await checkEvidence(tx, refs, [d.tenantId, d.partnerTenantId], c.tenantId);
      await tx.insert(N).values({ id: randomUUID(), tenantId: d.tenantId, partnerTenantId: d.partnerTenantId, disputeId: d.id, authorTenantId: c.tenantId, author: c.actor, note: input.note, evidenceRefs: refs });
      const other = c.tenantId === d.tenantId ? d.partnerTenantId : d.tenantId;
      await appendAuditToParties(tx, c.tenantId, twoPartyEvents(c.tenantId, other, c.actor, { type: 'dispute.note_added', subject: d.id, data: { evidence: refs.length } }));
      return toDispute(d, await notesOf(tx, d.id));
    });
  }

  /**
   * One dispute: either party's owner, or a platform operator (the read audited in both chains).
   * @throws 404 not visible; 403 an owner without tenant who is no operator.
   */
  async get(tenantId: string | null, operator: Operator | null, id: string): Promise<Dispute> {
    if (operator) {
      return crossTenant(this.deps.db, 'platform operator reviews a dispute (design §8.25)', async (tx) => {
        const [d] = await tx.select().from(D).where(eq(D.id, id));
        if (!d) throw notFound('dispute');
        await appendAuditToParties(tx, null, this.operatorEvents(d, operator, 'dispute.viewed', {}));
        return toDispute(d, await notesOf(tx, d.id));
      });
    }
    if (!tenantId) throw forbidden('the user belongs to no tenant');
    return withTenant(this.deps.db, tenantId, async (tx) => {
      const [d] = await tx.select().from(D).where(eq(D.id, id));
      if (!d) throw notFound('dispute');
      return toDispute(d, await notesOf(tx, d.id));
    });
  }

  /** Disputes, newest first: every tenant's for an operator (audited per dispute), the tenant's own otherwise. */
  async list(tenantId: string | null, operator: Operator | null, q: DisputeListQuery): Promise<DisputePage> {
    const limit = pageLimit(q.limit, this.deps);
    const after = q.cursor !== undefined ? decodeKeyset(q.cursor) : undefined;
    const query = async (tx: Tx) => {
      const conds = [];
      if (q.status) conds.push(eq(D.status, q.status));
      if (after) conds.push(or(lt(D.createdAt, after.at), and(eq(D.createdAt, after.at), lt(D.id, after.id)))!);
      const rows = await tx
        .select()
        .from(D)
        .where(conds.length ? and(...conds) : undefined)
        .orderBy(desc(D.createdAt), desc(D.id))
        .limit(limit + 1);
      const page = rows.slice(0, limit);
      if (operator) for (const d of page) await appendAuditToParties(tx, null, this.operatorEvents(d, operator, 'dispute.viewed', { listed: true }));
      const out = await Promise.all(page.map(async (d) => toDispute(d, await notesOf(tx, d.id))));
      const last = page.at(-1);
      return { disputes: out, next_cursor: rows.length > limit && last ? encodeKeyset(last.createdAt, last.id) : null };
    };
    if (operator) return crossTenant(this.deps.db, 'platform operator lists disputes of every tenant (design §8.25)', query);
    if (!tenantId) throw forbidden('the user belongs to no tenant');
    return withTenant(this.deps.db, tenantId, query);
  }

  /**
   * Resolve (operator): disputed -> resolved with `refund` (what is left of the charge), `partial`
   * (`amount_cents`, at most what is left) or `none`. @throws 400 amount missing/too large/with
   * another outcome; 404; 409 already resolved; 502 processor refused the refund.
   */
  async resolve(operator: Operator, id: string, input: ResolveDisputeRequest): Promise<Dispute> {
    if (input.outcome === 'partial' && input.amount_cents === undefined) throw badRequest('a partial outcome needs amount_cents');
    if (input.outcome !== 'partial' && input.amount_cents !== undefined) throw badRequest('amount_cents goes with a partial outcome only');
    const tenants = await crossTenant(this.deps.db, 'platform operator resolves a dispute (design §8.25)', async (tx) => (await tx.select().from(D).where(eq(D.id, id)))[0]);
    if (!tenants) throw notFound('dispute');
    const out = await withTenant(this.deps.db, tenants.tenantId, async (tx) => {
      await lockChains(tx, [tenants.tenantId, tenants.partnerTenantId]);
      const [d] = await tx.select().from(D).where(eq(D.id, id)).for('update');
      if (!d) throw notFound('dispute');
      if (d.status !== 'open') throw conflict('the dispute is already resolved');
      const r = await rentalsRepo.getRental(tx, d.rentalId, true);
      if (!r) throw notFound('rental');
      const left = r.amountCents - r.refundedCents;
      const refund = input.outcome === 'refund' ? left : input.outcome === 'partial' ? input.amount_cents! : 0;
      if (refund > left) throw badRequest(`amount_cents is above what is left of the charge (${left})`);
      const refunded = (await this.deps.rentals.refundIn(tx, r, refund)).row;
      const [rental] = await rentalsRepo.updateRental(tx, r.id, { status: 'resolved', reason: `dispute_${input.outcome}`, endedAt: new Date() });
      await rentalsRepo.dropSuspensionHeld(tx, r.id);
      const now = new Date();
      const [row] = await tx
        .update(D)
        .set({ status: 'resolved', outcome: input.outcome, amountCents: refund, resolutionNote: input.note, resolvedBy: operator.sub, resolvedAt: now })
        .where(eq(D.id, d.id))
        .returning();
      await appendAuditToParties(tx, d.tenantId, this.operatorEvents(d, operator, 'dispute.resolved', { outcome: input.outcome, refund_cents: refund, refunded_total_cents: refunded.refundedCents }));
      return { dispute: toDispute(row!, await notesOf(tx, d.id)), rental: rental! };
    });
    await this.deps.rentals.notify(out.rental, 'disputed');
    await this.notify(out.dispute);
    return out.dispute;
  }

  /** The same event in both tenants' chains, by the operator (`operator:<sub>`). */
  private operatorEvents(d: DisputeRow, operator: Operator, type: 'dispute.viewed' | 'dispute.resolved', data: Record<string, unknown>) {
    const actor = `operator:${operator.sub}`;
    return [d.tenantId, d.partnerTenantId].map((tenantId) => ({ tenantId, event: { type, actor, subject: d.id, data: { rental_id: d.rentalId, ...data } } }));
  }

  private async notify(d: Dispute): Promise<void> {
    const data = { dispute_id: d.dispute_id, rental_id: d.rental_id, status: d.status, outcome: d.outcome };
    await this.deps.notifier.toOwners(d.renter_tenant_id, 'dispute_updated', data);
    await this.deps.notifier.toOwners(d.developer_tenant_id, 'dispute_updated', data);
  }
}

/**
 * The tenant audit log (contract §4.14; design §8.10, §8.22). {@link appendAudit} records an event
 * inside the caller's own transaction, so the entry commits (or rolls back) with the action;
 * {@link AuditService} answers the owner's queries and recomputes the chain.
 */
import { randomUUID } from 'node:crypto';
import type { AuditEvent, AuditEventPage, AuditEventQuery, SubmitAuditEventRequest } from '@parley/protocol';
import type { Db, Tx } from '../../db/client.js';
import { withTenant } from '../../db/tenant.js';
import { badRequest } from '../../lib/errors.js';
import { eventHash, GENESIS_HASH, verifyChain, type ChainRow, type ChainVerdict } from './chain.js';
import type { AuditInput } from './events.js';
import * as repo from './repo.js';
import { agentActionData, type CallingAgent } from './agent-actions.js';
import { appendLeaf } from './tree.js';

/**
 * Append one event to `tenantId`'s chain within `tx` (which must be scoped to that tenant).
 * Appends of a tenant are serialised with a transaction-level advisory lock on a tenant-derived
 * key, then the newest `(seq, hash)` is read, the next link inserted and its leaf appended to the
 * tenant's Merkle tree (tree.ts), so chain and tree commit together and instances keep one tree.
 * @returns the stored event in its wire form (as `GET /audit/events` lists it); callers that need
 *   only the side effect may ignore it.
 */
export async function appendAudit(tx: Tx, tenantId: string, input: AuditInput): Promise<AuditEvent> {
  await repo.lockChain(tx, tenantId);
  const last = await repo.appendPoint(tx, tenantId);
  const prevHash = last?.hash ?? GENESIS_HASH;
  const createdAt = new Date();
  const event = {
    event_id: randomUUID(),
    tenant_id: tenantId,
    seq: (last?.seq ?? 0) + 1,
    type: input.type,
    actor: input.actor,
    subject: input.subject ?? null,
    data: input.data ?? {},
    created_at: createdAt.toISOString(),
  };
  const hash = eventHash(prevHash, event);
  await repo.insertAuditEvent(tx, {
    id: event.event_id,
    tenantId,
    seq: event.seq,
    type: event.type,
    actor: event.actor,
    subject: event.subject,
    data: event.data,
    createdAt,
    prevHash,
    hash,
  });
  // The transparency log's leaf seq - 1 (design §8.33), in the same transaction, under the same lock.
  await appendLeaf(tx, tenantId, event.seq - 1, Buffer.from(hash, 'hex'), last?.frontier ?? new Map());
  return { event_id: event.event_id, type: event.type, actor: event.actor, subject: event.subject, data: event.data, created_at: event.created_at, prev_hash: prevHash, hash };
}

const toChainRow = (r: repo.AuditRow): ChainRow => ({
  event_id: r.id,
  tenant_id: r.tenantId,
  seq: r.seq,
  type: r.type,
  actor: r.actor,
  subject: r.subject,
  data: r.data,
  created_at: r.createdAt.toISOString(),
  prev_hash: r.prevHash,
  hash: r.hash,
});

/** An event row in its wire form (as `GET /audit/events` lists it). */
export const toOut = (r: repo.AuditRow): AuditEvent => ({
  event_id: r.id,
  type: r.type,
  actor: r.actor,
  subject: r.subject,
  data: r.data,
  created_at: r.createdAt.toISOString(),
  prev_hash: r.prevHash,
  hash: r.hash,
});

function parseTime(name: string, v: string | undefined): Date | undefined {
  if (v === undefined) return undefined;
  const d = new Date(v);
  if (Number.isNaN(d.getTime())) throw badRequest(`${name} must be an ISO 8601 timestamp`);
  return d;
}

/** Recompute `tenantId`'s chain in `tx` (shared by the route and the CLI). */
export async function verifyTenantChain(tx: Tx, tenantId: string): Promise<ChainVerdict> {
  return verifyChain((await repo.chainOf(tx, tenantId)).map(toChainRow));
}

export class AuditService {
  constructor(private readonly db: Db) {}

  /** Newest first; `next_cursor` is the last answered event's `seq` when more may follow, else null. */
  async list(tenantId: string, q: AuditEventQuery): Promise<AuditEventPage> {
    if (q.cursor !== undefined && !/^[1-9]\d{0,14}$/.test(q.cursor)) throw badRequest('cursor must be a next_cursor value');
    const limit = q.limit ?? 50;
    const rows = await withTenant(this.db, tenantId, (tx) =>
      repo.listAuditEvents(tx, tenantId, {
        type: q.type,
        actor: q.actor,
        subject: q.subject,
        since: parseTime('since', q.since),
        until: parseTime('until', q.until),
        beforeSeq: q.cursor === undefined ? undefined : Number(q.cursor),
        limit,
      }),
    );
    const last = rows.at(-1);
    return { events: rows.map(toOut), next_cursor: rows.length === limit && last ? String(last.seq) : null };
  }

  /**
   * `POST /audit/events` (contract §4.19 `svc_submit_audit`): the calling agent appends an
   * `agent.action` event (actor `agent.actor`, subject the device id, data
   * `{action, details, trace_id, parent_span_id, hub_address}`, agent-actions.ts) to its tenant's
   * chain; answers the stored event as `GET /audit/events` lists it.
   * @throws 413 `details` above 16 KiB of JSON; 400 all-zero trace ids or text `jsonb` cannot store.
   */
  submit(agent: CallingAgent, input: SubmitAuditEventRequest): Promise<AuditEvent> {
    const data = agentActionData(input);
    return withTenant(this.db, agent.tenantId, async (tx) => {
      const hubAddress = await repo.hubAddressOfDevice(tx, agent.deviceId);
      return appendAudit(tx, agent.tenantId, { type: 'agent.action', actor: agent.actor, subject: agent.deviceId, data: data(hubAddress) });
    });
  }

  /** Recompute the tenant's chain (`GET /audit/verify`). */
  verify(tenantId: string): Promise<ChainVerdict> {
    return withTenant(this.db, tenantId, (tx) => verifyTenantChain(tx, tenantId));
  }
}

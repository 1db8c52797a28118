/**
 * Decisions (contract §2.4 decision_request, §2.16, §3.8, §4.15, §6.1 decision_response; design §8.4,
 * §8.19, §8.22). An agent asks its owner a structured question; the owner approves, denies or
 * defers it; a deadline that passes while the decision still awaits fires its auto_action once.
 *
 * States: `pending` -> `approved` | `denied` | `deferred` | `expired`; `deferred` -> `approved` |
 * `denied` | `expired` (a deferred decision stays open: it is listed, can be decided later, and its
 * deadline still fires). Any other transition answers 409.
 *
 * Events: the owners' sockets get `decision_created` (the decision) when one is created; the agent
 * device gets `decision_response {decision_id, resolution, option_id, note}` on every resolution
 * (defer included) and `decision_response {…, resolution: "expired", auto_action}` on expiry.
 * Events are sent after the transaction commits, by the one transaction that changed the row.
 *
 * Audit (docs/decisions.md "Audit coverage"): `decision.created` (actor: owner `sub`, or the
 * agent's `device:<id>` / `api_key:<id>`), `decision.resolved` (owner `sub`; data: resolution and
 * option id, never the note) and `decision.expired` (actor `system`, also when a late resolution
 * finds the deadline passed) are recorded in the transaction that changed the row. Titles,
 * descriptions, options and notes are content and stay out of the log.
 */
import type { AutoAction, CreateDecisionRequest, Decision, DecisionOption, DecisionResponseEvent, ResolveDecisionRequest } from '@parley/protocol';
import { randomUUID } from 'node:crypto';
import type { Db, Tx } from '../../db/client.js';
import { crossTenant, withTenant } from '../../db/tenant.js';
import { badRequest, conflict, forbidden, notFound } from '../../lib/errors.js';
import type { Notifier } from '../../realtime/notifier.js';
import { getDevice } from '../devices/index.js';
import { appendAudit, appendAuditToParties, type AuditInput } from '../audit/index.js';
import * as repo from './repo.js';
import { decodeKeyset, encodeKeyset, pageLimit } from '../../lib/paging.js';

/** The contract §2.4 decision_request fields of a create body (`deadline` ISO 8601, in the future). */
export type DecisionInput = Omit<CreateDecisionRequest, 'device_id'>;

/**
 * Who creates a decision: an owner on behalf of `device_id`, or the agent device itself. An
 * agent's `actor` is its audit actor (`api_key:<id>` or `device:<id>`; default `device:<deviceId>`).
 */
export type DecisionCreator =
  | { kind: 'owner'; sub: string; deviceId: string | undefined }
  | { kind: 'agent'; deviceId: string; deviceKind: 'owner' | 'agent'; bodyDeviceId: string | undefined; actor?: string };

/** The audit actor of the deadline job (`decision.expired`). */
export const EXPIRY_AUDIT_ACTOR = 'system';

export interface DecisionServiceDeps {
  db: Db;
  notifier: Notifier;
  listDefault: number;
  listMax: number;
  /** Most decisions one deadline-job tick expires (the next tick takes the rest); default 500. */
  expiryBatch?: number;
}

const STATUS_OF = { approve: 'approved', deny: 'denied', defer: 'deferred' } as const;

export const toDecisionOut = (r: repo.DecisionRow): Decision => ({
  decision_id: r.id,
  device_id: r.deviceId,
  title: r.title,
  description: r.description,
  options: r.options as DecisionOption[],
  deadline: r.deadline?.toISOString() ?? null,
  auto_action: (r.autoAction as AutoAction | null) ?? null,
  status: r.status as Decision['status'],
  option_id: r.optionId,
  note: r.note,
  created_by: r.createdBy,
  created_at: r.createdAt.toISOString(),
  resolved_at: r.resolvedAt?.toISOString() ?? null,
  resolved_by: r.resolvedBy,
});

/** The `decision_response` of an expired row (its auto_action's option, or null). */
const expiryResponse = (r: repo.DecisionRow): DecisionResponseEvent => ({
  decision_id: r.id,
  resolution: 'expired',
  option_id: r.optionId,
  note: null,
  auto_action: (r.autoAction as AutoAction | null) ?? null,
});

/** The `decision.expired` event of an expired row (`from`: the awaiting status it left, when known). */
const expiryAudit = (r: repo.DecisionRow, from?: string): AuditInput => ({
  type: 'decision.expired',
  actor: EXPIRY_AUDIT_ACTOR,
  subject: r.id,
  data: { ...(from ? { from } : {}), auto_action: (r.autoAction as AutoAction | null)?.resolution ?? null, option_id: r.optionId },
});

/** 400 unless the options are distinct, at most one is the default, and `auto_action` names one of them. */
function checkRequest(input: DecisionInput, now: Date): void {
  const ids = new Set(input.options.map((o) => o.option_id));
  if (ids.size !== input.options.length) throw badRequest('options must have distinct option_id values');
  if (input.options.filter((o) => o.is_default).length > 1) throw badRequest('at most one option may be is_default');
  if (input.deadline !== undefined && !(new Date(input.deadline) > now)) throw badRequest('deadline must be in the future');
  const auto = input.auto_action?.option_id;
  if (auto !== undefined && !ids.has(auto)) throw badRequest('auto_action.option_id must name one of the options');
}

export class DecisionService {
  private readonly batch: number;

  constructor(private readonly deps: DecisionServiceDeps) {
    this.batch = deps.expiryBatch ?? 500;
  }

  /**
   * Create a pending decision for an ACTIVE agent device of the tenant (design §8.19). An owner
   * names it in `device_id` (400 when missing, 404 when not in the tenant, 400 when not an ACTIVE
   * agent); an agent creates its own (a different `device_id` is 403; an owner device's JWT 403).
   * Owners' sockets get `decision_created`.
   */
  async create(tenantId: string, creator: DecisionCreator, input: DecisionInput): Promise<Decision> {
    const now = new Date();
    checkRequest(input, now);
    const deviceId = this.targetDevice(creator);
    const out = await withTenant(this.deps.db, tenantId, async (tx) => {
      const d = await getDevice(tx, deviceId);
      if (!d || d.deletedAt) throw notFound('device');
      if (d.kind !== 'agent' || d.status !== 'ACTIVE') throw badRequest('device_id must name an ACTIVE agent device');
      const [row] = await repo.insertDecision(tx, {
        id: randomUUID(),
        tenantId,
        deviceId,
        title: input.title,
        description: input.description ?? null,
        options: input.options,
        deadline: input.deadline === undefined ? null : new Date(input.deadline),
        autoAction: input.auto_action ?? null,
        createdBy: creator.kind === 'owner' ? creator.sub : `device:${deviceId}`,
        // Millisecond precision (not now() microseconds) so that list cursors compare exactly.
        createdAt: now,
      });
      await appendAudit(tx, tenantId, {
        type: 'decision.created',
        actor: creator.kind === 'owner' ? creator.sub : (creator.actor ?? `device:${deviceId}`),
        subject: row!.id,
        data: { device_id: deviceId, option_count: input.options.length, deadline: row!.deadline?.toISOString() ?? null, auto_action: input.auto_action?.resolution ?? null },
      });
      return toDecisionOut(row!);
    });
    await this.deps.notifier.toOwners(tenantId, 'decision_created', out);
    return out;
  }

  /** Awaiting decisions (pending and deferred), oldest first; `next_cursor` is null on the last page. */
  list(tenantId: string, q: { cursor?: string; limit?: number }): Promise<{ decisions: Decision[]; next_cursor: string | null }> {
    const after = q.cursor === undefined ? undefined : decodeKeyset(q.cursor);
    const limit = pageLimit(q.limit, this.deps);
    return withTenant(this.deps.db, tenantId, async (tx) => {
      const rows = await repo.listAwaiting(tx, after, limit + 1);
      const page = rows.slice(0, limit);
      return { decisions: page.map(toDecisionOut), next_cursor: rows.length > limit ? encodeKeyset(page.at(-1)!.createdAt, page.at(-1)!.id) : null };
    });
  }

  /**
   * Resolve an awaiting decision (approve, deny or defer) and send the agent `decision_response`.
   * `option_id` must name an option (400); approve without one takes the default option, if any.
   * 404 for an unknown decision (or another tenant's), 409 when it is already decided, when a
   * deferred one is deferred again, or when its deadline has passed (it is expired then and
   * there, and the agent gets the expiry response, exactly as the deadline job would send it).
   */
  async resolve(tenantId: string, sub: string, id: string, input: ResolveDecisionRequest): Promise<Decision> {
    const now = new Date();
    const { row, expired } = await withTenant(this.deps.db, tenantId, async (tx) => {
      const d = await repo.getDecisionForUpdate(tx, id);
      if (!d) throw notFound('decision');
      if (!(repo.AWAITING as readonly string[]).includes(d.status)) throw conflict(`decision is already ${d.status}`);
      if (d.deadline && d.deadline <= now) return { row: await this.expireLocked(tx, d, now), expired: true };
      if (input.resolution === 'defer' && d.status === 'deferred') throw conflict('decision is already deferred');
      const options = d.options as DecisionOption[];
      if (input.option_id !== undefined && !options.some((o) => o.option_id === input.option_id)) throw badRequest('option_id must name one of the options');
      const optionId = input.option_id ?? (input.resolution === 'approve' ? options.find((o) => o.is_default)?.option_id : undefined) ?? null;
      const row = await repo.updateDecision(tx, d.id, {
        status: STATUS_OF[input.resolution],
        optionId,
        note: input.note ?? null,
        resolvedAt: now,
        resolvedBy: sub,
      });
      await appendAudit(tx, tenantId, { type: 'decision.resolved', actor: sub, subject: d.id, data: { from: d.status, resolution: input.resolution, option_id: optionId } });
      return { row, expired: false };
    });
    if (expired) {
      await this.announceExpiry([row]);
      throw conflict('decision is already expired: its deadline passed');
    }
    await this.deps.notifier.toDevices(tenantId, [row.deviceId], 'decision_response', {
      decision_id: row.id,
      resolution: input.resolution,
      option_id: row.optionId,
      note: row.note,
    } satisfies DecisionResponseEvent);
    return toDecisionOut(row);
  }

  /**
   * One deadline-job tick (design §8.4, §8.19): claim every awaiting decision whose deadline is
   * `<= now` across tenants (one statement, `FOR UPDATE SKIP LOCKED`, see repo.claimDue), mark it
   * `expired`, and after commit send its agent `decision_response {resolution: "expired",
   * auto_action}`. Safe to run concurrently on any number of instances: each decision is claimed
   * by exactly one transaction, so it expires and is announced once. Each expiry records
   * `decision.expired` (actor `system`) in its tenant's chain in the same transaction, chains
   * locked in tenant-id order. Returns how many expired.
   */
  async expireDue(now = new Date()): Promise<number> {
    const rows = await crossTenant(this.deps.db, 'maintenance: the decision deadline job claims due decisions of every tenant', async (tx) => {
      const claimed = await repo.claimDue(tx, now, this.batch);
      const entries = claimed.map((r) => ({ tenantId: r.tenantId, event: expiryAudit(r) }));
      await appendAuditToParties(tx, null, entries);
      return claimed;
    });
    await this.announceExpiry(rows);
    return rows.length;
  }

  private async expireLocked(tx: Tx, d: repo.DecisionRow, now: Date): Promise<repo.DecisionRow> {
    const auto = d.autoAction as AutoAction | null;
    const row = await repo.updateDecision(tx, d.id, { status: 'expired', optionId: auto?.option_id ?? null, resolvedAt: now, resolvedBy: repo.DEADLINE_ACTOR });
    await appendAudit(tx, d.tenantId, expiryAudit(row, d.status));
    return row;
  }

  private async announceExpiry(rows: repo.DecisionRow[]): Promise<void> {
    for (const r of rows) await this.deps.notifier.toDevices(r.tenantId, [r.deviceId], 'decision_response', expiryResponse(r));
  }

  private targetDevice(creator: DecisionCreator): string {
    if (creator.kind === 'owner') {
      if (!creator.deviceId) throw badRequest('device_id is required when an owner creates a decision on behalf of an agent');
      return creator.deviceId;
    }
    if (creator.deviceKind !== 'agent') throw forbidden('only agent devices request decisions; owners name the agent in device_id');
    if (creator.bodyDeviceId !== undefined && creator.bodyDeviceId !== creator.deviceId) throw forbidden('an agent creates decisions for itself only');
    return creator.deviceId;
  }
}

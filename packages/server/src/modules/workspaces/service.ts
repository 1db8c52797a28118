/**
 * Workspaces (contract §2.5, §4.13, §5): a named group of a tenant's agent devices, each member with a
 * role (`admin` | `member`). Owners see every workspace of their tenant (role `owner`); an API-key
 * agent sees the workspaces its bound device belongs to (contract §2.5 summaries `{id, name, role}`),
 * only the one named by `X-Workspace-Id` when sent. Members must be ACTIVE agent devices of the
 * tenant (400 otherwise). Every unit of work is one tenant-scoped transaction.
 */
import { randomUUID } from 'node:crypto';
import type { AddWorkspaceMemberRequest, CreateWorkspaceRequest, Workspace, WorkspaceMember, WorkspaceRole, WorkspaceSummary } from '@parley/protocol';
import type { Db, Tx } from '../../db/client.js';
import { withTenant } from '../../db/tenant.js';
import { badRequest, notFound } from '../../lib/errors.js';
import * as repo from './repo.js';

const memberOut = (m: repo.MemberRow): WorkspaceMember => ({
  device_id: m.deviceId,
  name: m.name,
  status: m.status,
  role: m.role as WorkspaceRole,
  added_at: m.addedAt.toISOString(),
});

export class WorkspaceService {
  constructor(private readonly db: Db) {}

  /**
   * `POST /workspaces`: create a workspace with its initial members in one transaction.
   * @throws 400 when a member is not an ACTIVE agent device of the tenant or is named twice.
   */
  create(tenantId: string, createdBy: string, input: CreateWorkspaceRequest): Promise<Workspace> {
    return withTenant(this.db, tenantId, async (tx) => {
      const id = randomUUID();
      await repo.insertWorkspace(tx, { id, tenantId, name: input.name.trim(), createdBy });
      await this.addMembers(tx, tenantId, id, input.members ?? []);
      return this.detail(tx, id);
    });
  }

  /** Every workspace of the tenant, for its owner: `{id, name, role: "owner", member_count}`. */
  listForOwner(tenantId: string): Promise<WorkspaceSummary[]> {
    return withTenant(this.db, tenantId, async (tx) =>
      (await repo.listWithCounts(tx)).map((w) => ({ id: w.id, name: w.name, role: 'owner' as const, member_count: w.memberCount })),
    );
  }

  /**
   * The workspaces an agent device belongs to, with its role there; `only` (a validated
   * `X-Workspace-Id`) narrows the answer to that workspace.
   */
  listForAgent(tenantId: string, deviceId: string, only?: string | null): Promise<WorkspaceSummary[]> {
    return withTenant(this.db, tenantId, async (tx) =>
      (await repo.listOfDevice(tx, deviceId, only ?? undefined)).map((w) => ({ id: w.id, name: w.name, role: w.role as WorkspaceRole })),
    );
  }

  /** One workspace with its members; 404 when unknown (or another tenant's). */
  get(tenantId: string, id: string): Promise<Workspace> {
    return withTenant(this.db, tenantId, (tx) => this.detail(tx, id));
  }

  /**
   * Add a member, or change the role of an existing one (idempotent); answers the workspace.
   * @throws 404 unknown workspace; 400 when the device is not an ACTIVE agent device of the tenant.
   */
  addMember(tenantId: string, id: string, member: AddWorkspaceMemberRequest): Promise<Workspace> {
    return withTenant(this.db, tenantId, async (tx) => {
      await this.mustGet(tx, id, true);
      await this.addMembers(tx, tenantId, id, [member]);
      return this.detail(tx, id);
    });
  }

  /** Remove a member; 404 when the workspace is unknown or the device is not a member. */
  removeMember(tenantId: string, id: string, deviceId: string): Promise<void> {
    return withTenant(this.db, tenantId, async (tx) => {
      await this.mustGet(tx, id, true);
      if (!(await repo.deleteMember(tx, id, deviceId))) throw notFound('workspace member');
    });
  }

  /** The workspace row inside a caller's transaction; 404 when unknown (team rooms use it). */
  async mustGet(tx: Tx, id: string, forUpdate = false): Promise<repo.WorkspaceRow> {
    const w = await repo.getWorkspace(tx, id, forUpdate);
    if (!w) throw notFound('workspace');
    return w;
  }

  private async detail(tx: Tx, id: string): Promise<Workspace> {
    const w = await this.mustGet(tx, id);
    const members = await repo.listMembers(tx, id);
    return { id: w.id, name: w.name, role: 'owner', members: members.map(memberOut), created_at: w.createdAt.toISOString() };
  }

  private async addMembers(tx: Tx, tenantId: string, workspaceId: string, members: AddWorkspaceMemberRequest[]): Promise<void> {
    const ids = members.map((m) => m.device_id.toLowerCase());
    if (new Set(ids).size !== ids.length) throw badRequest('a device is named twice in members');
    const found = new Map((await repo.devicesByIds(tx, ids)).map((d) => [d.id, d]));
    const bad = ids.filter((id) => {
      const d = found.get(id);
      return !d || d.kind !== 'agent' || d.status !== 'ACTIVE';
    });
    if (bad.length > 0) throw badRequest(`workspace members must be ACTIVE agent devices of the tenant: ${bad.join(', ')}`);
    await repo.upsertMembers(
      tx,
      members.map((m, i) => ({ workspaceId, tenantId, deviceId: ids[i]!, role: m.role ?? 'member' })),
    );
  }
}

/**
 * The compiled-rule cache of the policy engine (contract §2.7, §4.9; design §8.5): each
 * tenant's enabled policies, compiled once (engine.ts `compilePolicies`) and reused by every
 * decision until the tenant's policy set changes.
 *
 * Invalidation works on every instance at once and needs no message between them: a trigger on
 * `policies` bumps the tenant's version in `policy_epochs` in the writing transaction (migration
 * 0029; every writer: the policy routes, room creation scoping policies, cascades), and each
 * decision reads that version in the statement that used to load the policies
 * (repo.ts `policiesIfChanged`), which answers the rules only when the cached version is stale,
 * or takes it from the caller, who read it in its own statement (rooms: with the room and its
 * members, repo.ts `policyEpochOf`), and then needs no statement at all.
 * A decision therefore always applies the policy set committed when its statement ran, as it did
 * when it loaded the rows itself, with no window in which another instance's change is unseen
 * (a bus event could arrive late or be lost) and no extra statement.
 */
import type { Tx } from '../../db/client.js';
import { compilePolicies, type CompiledPolicy } from './engine.js';
import * as repo from './repo.js';

interface Entry {
  epoch: number;
  policies: CompiledPolicy[];
}

/** Per-tenant compiled policy sets of one instance, versioned by `policy_epochs`. */
export class CompiledPolicies {
  private readonly byTenant = new Map<string, Entry>();
  private compileCount = 0;

  /** @param maxTenants most tenants kept (the least recently loaded one is dropped first). */
  constructor(private readonly maxTenants = 10_000) {}

  /**
   * The enabled policies of `tenantId` compiled, in evaluation order, as committed when this
   * call's one statement ran in `tx` (a transaction scoped to that tenant). Reloads and compiles
   * only when the tenant's version changed since the cached set. With `epoch` (the version the
   * caller read in `tx`, repo.ts `policyEpochOf`) a current cached set costs no statement.
   */
  async get(tx: Tx, tenantId: string, epoch?: number): Promise<CompiledPolicy[]> {
    const hit = this.byTenant.get(tenantId);
    if (hit && epoch !== undefined && hit.epoch === epoch) return hit.policies;
    return this.load(tx, tenantId, hit);
  }

  /** The cached compiled set of `tenantId` when it is the one of version `epoch`, else undefined (no I/O). */
  peek(tenantId: string, epoch: number): CompiledPolicy[] | undefined {
    const hit = this.byTenant.get(tenantId);
    return hit && hit.epoch === epoch ? hit.policies : undefined;
  }

  private async load(tx: Tx, tenantId: string, hit: Entry | undefined): Promise<CompiledPolicy[]> {
    const { epoch, rules } = await repo.policiesIfChanged(tx, tenantId, hit?.epoch ?? null);
    if (hit && hit.epoch === epoch) return hit.policies;
    const policies = compilePolicies(rules);
    this.compileCount++;
    this.byTenant.delete(tenantId);
    if (this.byTenant.size >= this.maxTenants) this.byTenant.delete(this.byTenant.keys().next().value as string);
    this.byTenant.set(tenantId, { epoch, policies });
    return policies;
  }

  /** How many policy sets this instance compiled so far (tests and diagnostics: a warm cache does not add any). */
  get compiles(): number {
    return this.compileCount;
  }
}

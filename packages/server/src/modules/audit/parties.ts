/**
 * Audit helpers shared by the modules that record events (contract §4.14; design §8.10;
 * docs/decisions.md "Audit coverage"): the `actor` string of a request principal, and appends
 * to the chains of the two tenants of a two-party action (federation agreements, federated A2A
 * channels) inside ONE transaction.
 */
import type { Principal } from '../../auth/authenticator.js';
import type { Tx } from '../../db/client.js';
import { switchTenant } from '../../db/tenant.js';
import type { AuditInput } from './events.js';
import { lockChain } from './repo.js';
import { appendAudit } from './service.js';

/**
 * The audit `actor` of a principal: the owner's `sub`, `device:<device id>` for a device JWT,
 * `api_key:<key id>` for an API key.
 */
export function auditActor(p: Principal): string {
  if (p.kind === 'owner') return p.sub;
  if (p.kind === 'device') return `device:${p.deviceId}`;
  return `api_key:${p.apiKeyId}`;
}

/** The `actor` recorded in another tenant's chain for an action of `tenantId`: principals of one tenant are not disclosed to another. */
export const tenantActor = (tenantId: string) => `tenant:${tenantId}`;

/** One event for one tenant's chain. */
export interface PartyEvent {
  tenantId: string;
  event: AuditInput;
}

/**
 * Append `entries` (each to its own tenant's chain) within `tx`, which is scoped to `home`
 * (a {@link withTenant} transaction, or a cross-tenant one when `home` is null). The chains are
 * locked in ascending tenant-id order, so two transactions recording in the same two chains cannot
 * deadlock on the chain locks; the scope is switched for each foreign tenant (RLS stays on) and
 * switched back to `home` at the end. Entries of the same tenant keep their relative order.
 */
export async function appendAuditToParties(tx: Tx, home: string | null, entries: PartyEvent[]): Promise<void> {
  const ordered = entries.map((e, i) => ({ ...e, i })).sort((a, b) => (a.tenantId === b.tenantId ? a.i - b.i : a.tenantId < b.tenantId ? -1 : 1));
  let scope = home;
  for (const e of ordered) {
    if (home !== null && scope !== e.tenantId) {
      await switchTenant(tx, e.tenantId);
      scope = e.tenantId;
    }
    await appendAudit(tx, e.tenantId, e.event);
  }
  if (home !== null && scope !== home) await switchTenant(tx, home);
}

/**
 * The events of a two-party action: the acting tenant's chain names the principal (`actor`);
 * the other party's chain, when it is another tenant, names the acting tenant
 * (`tenant:<id>`, see {@link tenantActor}). Both carry the same type, subject and data.
 */
export function twoPartyEvents(actingTenant: string, otherTenant: string, actor: string, event: Omit<AuditInput, 'actor'>): PartyEvent[] {
  const out: PartyEvent[] = [{ tenantId: actingTenant, event: { ...event, actor } }];
  if (otherTenant !== actingTenant) out.push({ tenantId: otherTenant, event: { ...event, actor: tenantActor(actingTenant) } });
  return out;
}

/**
 * Take the chain locks of several tenants in ascending tenant-id order, at the START of a
 * two-party transaction that will append to their chains in several steps (a marketplace rental's
 * grant in the developer's chain, then the rental event in both): without it, two such
 * transactions can take the same two locks in opposite orders and deadlock. Re-entrant: the later
 * appends take the same transaction-scoped locks again at no cost.
 */
export async function lockChains(tx: Tx, tenantIds: string[]): Promise<void> {
  for (const t of [...new Set(tenantIds)].sort()) await lockChain(tx, t);
}

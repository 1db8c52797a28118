/**
 * Tenant scope (design §4). Every tenant-scoped unit of work runs in one transaction that first
 * switches to the application role (NOLOGIN, no BYPASSRLS) and sets `app.tenant_id`, so row-level
 * security filters every query, even when the connection itself is a superuser.
 *
 * Code that must cross tenants goes through {@link crossTenant}, the single greppable escape hatch.
 */
import { sql } from 'drizzle-orm';
import type { Db, Tx } from './client.js';

/** The application role created by the RLS migration. */
export const APP_ROLE = 'parley_app';

/**
 * Run `fn` in a transaction scoped to `tenantId`: `SET LOCAL ROLE parley_app` and
 * `app.tenant_id = tenantId`, both transaction-local (one round trip).
 */
export function withTenant<T>(db: Db, tenantId: string, fn: (tx: Tx) => Promise<T>): Promise<T> {
  return db.transaction(async (tx) => {
    await tx.execute(
      sql`select set_config('app.tenant_id', ${tenantId}, true), set_config('role', ${APP_ROLE}, true)`,
    );
    return fn(tx);
  });
}

/**
 * Switch the tenant scope of an open {@link withTenant} transaction to `tenantId`
 * (`app.tenant_id`, transaction-local; the role stays the application role, so RLS keeps
 * filtering). This is how a two-party unit of work stays atomic: an A2A message or a federated
 * channel transition reads and writes rows of both tenants (policy evaluations, held messages,
 * the peer's device keys) inside ONE transaction, switching scope between the steps, instead of
 * opening a second transaction or crossing tenants with superuser rights. Switch back when the
 * remaining steps belong to the first tenant.
 */
export async function switchTenant(tx: Tx, tenantId: string): Promise<void> {
  await tx.execute(sql`select set_config('app.tenant_id', ${tenantId}, true)`);
}

/**
 * Run `fn` in a transaction with the connection's own privileges, across tenants.
 * Use only where the contract requires it (enrollment by invite token, device-token auth lookups,
 * tenant creation, platform keys); `reason` documents why at the call site.
 */
export function crossTenant<T>(db: Db, reason: string, fn: (tx: Tx) => Promise<T>): Promise<T> {
  void reason;
  return db.transaction(fn);
}

/**
 * {@link crossTenant} for one read statement: `fn` gets the database itself, no transaction (one
 * round trip instead of three). For hot-path credential lookups (API-key authentication);
 * `reason` documents why at the call site.
 */
export function crossTenantRead<T>(db: Db, reason: string, fn: (q: Db) => Promise<T>): Promise<T> {
  void reason;
  return fn(db);
}

/**
 * Run `fn` in a transaction as the application role with NO tenant (`app.tenant_id` empty): RLS
 * shows only rows a policy opens to every scope — today the published marketplace listings
 * (migration 0021, design §8.23) — and nothing else. For anonymous public reads.
 */
export function withNoTenant<T>(db: Db, fn: (tx: Tx) => Promise<T>): Promise<T> {
  return db.transaction(async (tx) => {
    await tx.execute(sql`select set_config('app.tenant_id', '', true), set_config('role', ${APP_ROLE}, true)`);
    return fn(tx);
  });
}

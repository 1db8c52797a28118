/** Hub identity queries (tenant-scoped transactions unless named otherwise). */
import { and, asc, desc, eq, inArray, isNotNull, isNull, notExists, or, sql, type SQL } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import type { Tx } from '../../db/client.js';
import { devices, hubCapabilities, hubIdentities, hubTierChanges, hubVerificationMethods } from '../../db/schema/index.js';
import { TRUST_TIERS as TIERS, tierRank, type TrustTier as Tier } from '@parley/protocol';

/** A stored hub identity (contract §2.8). */
export type HubIdentityRow = typeof hubIdentities.$inferSelect;
/** A registered capability (contract §2.8). */
export type HubCapabilityRow = typeof hubCapabilities.$inferSelect;

/** Trust tiers, lowest first (contract §3.3, design §8.21): trust/types.ts TIERS under the name existing importers use. */
export const TRUST_TIERS = TIERS;
export type TrustTier = Tier;

/**
 * Text search configuration of `search_document` and of search queries: `english` (Snowball
 * stemming, so "translate" finds "translator" and "translation"; English stop words ignored).
 * Both sides must use the same one.
 */
export const SEARCH_CONFIG = 'english';
const CFG = sql.raw(`'${SEARCH_CONFIG}'::regconfig`);

export const insertHubIdentity = (tx: Tx, row: typeof hubIdentities.$inferInsert) => tx.insert(hubIdentities).values(row).returning();
/** The verification methods added to an identity's DID document, oldest first (design §8.15). */
export const listVerificationMethods = (tx: Tx, identityId: string) =>
  tx.select().from(hubVerificationMethods).where(eq(hubVerificationMethods.identityId, identityId)).orderBy(asc(hubVerificationMethods.createdAt), asc(hubVerificationMethods.keyId));

export const listHubIdentities = (tx: Tx) => tx.select().from(hubIdentities).orderBy(asc(hubIdentities.createdAt), asc(hubIdentities.id));

/** One identity by id; `forUpdate` locks the row until the transaction ends. */
export async function getHubIdentity(tx: Tx, id: string, forUpdate = false): Promise<HubIdentityRow | undefined> {
  const q = tx.select().from(hubIdentities).where(eq(hubIdentities.id, id));
  const [row] = forUpdate ? await q.for('update') : await q;
  return row;
}

/** The identity with this (lowercase) address; platform-wide when called inside crossTenant. `forUpdate` locks it. */
export async function getByAddress(tx: Tx, hubAddress: string, forUpdate = false): Promise<HubIdentityRow | undefined> {
  const q = tx.select().from(hubIdentities).where(eq(hubIdentities.hubAddress, hubAddress));
  const [row] = forUpdate ? await q.for('update') : await q;
  return row;
}

/** The identity bound to a device (at most one, design §8.18). */
export async function getByDevice(tx: Tx, deviceId: string): Promise<HubIdentityRow | undefined> {
  const [row] = await tx.select().from(hubIdentities).where(eq(hubIdentities.deviceId, deviceId)).orderBy(asc(hubIdentities.createdAt)).limit(1);
  return row;
}

export const updateHubIdentity = (tx: Tx, id: string, set: Partial<typeof hubIdentities.$inferInsert>) =>
  tx.update(hubIdentities).set(set).where(eq(hubIdentities.id, id)).returning();

/**
 * The identities created with API key `apiKeyId` (`POST /hub/agents`) that no device is bound to
 * yet, locked until the transaction ends (the key's first `client_key_register` binds them).
 */
export function pendingAgentIdentities(tx: Tx, apiKeyId: string): Promise<HubIdentityRow[]> {
  return tx
    .select()
    .from(hubIdentities)
    .where(and(eq(hubIdentities.apiKeyId, apiKeyId), isNull(hubIdentities.deviceId)))
    .for('update');
}

/** Rotation: identities still waiting for key `from`'s first registration wait for key `to` instead. */
export const movePendingAgentKey = (tx: Tx, from: string, to: string) =>
  tx
    .update(hubIdentities)
    .set({ apiKeyId: to })
    .where(and(eq(hubIdentities.apiKeyId, from), isNull(hubIdentities.deviceId)));

/**
 * `search_document` of a hub identity, as one SQL expression over the row and its registered
 * capabilities (config {@link SEARCH_CONFIG}), weighted for `ts_rank`:
 * A = hub address and display name, B = capability names (named at registration and
 * registered), C = description, D = registered capabilities' descriptions.
 */
const SEARCH_DOCUMENT = sql`
  setweight(to_tsvector(${CFG}, ${hubIdentities.hubAddress} || ' ' || ${hubIdentities.displayName}), 'A')
  || setweight(to_tsvector(${CFG}, coalesce((
       select string_agg(n, ' ') from (
         select jsonb_array_elements_text(${hubIdentities.capabilities}) as n
         union select ${hubCapabilities.name} from ${hubCapabilities} where ${hubCapabilities.identityId} = ${hubIdentities.id}
       ) as names), '')), 'B')
  || setweight(to_tsvector(${CFG}, coalesce(${hubIdentities.description}, '')), 'C')
  || setweight(to_tsvector(${CFG}, coalesce((
       select string_agg(${hubCapabilities.description}, ' ') from ${hubCapabilities} where ${hubCapabilities.identityId} = ${hubIdentities.id}
     ), '')), 'D')`;

/**
 * Recompute `search_document` (and `updated_at`) of one identity. Every write that changes its
 * names, description or capabilities calls this in the same transaction.
 */
export async function refreshSearchDocument(tx: Tx, identityId: string): Promise<void> {
  await tx.update(hubIdentities).set({ searchDocument: SEARCH_DOCUMENT, updatedAt: sql`now()` }).where(eq(hubIdentities.id, identityId));
}

// ---- capabilities -------------------------------------------------------------------------

export const insertCapability = (tx: Tx, row: typeof hubCapabilities.$inferInsert) => tx.insert(hubCapabilities).values(row).returning();

/** An identity's registered capabilities, oldest first. */
export const listCapabilities = (tx: Tx, identityId: string) =>
  tx.select().from(hubCapabilities).where(eq(hubCapabilities.identityId, identityId)).orderBy(asc(hubCapabilities.registeredAt), asc(hubCapabilities.name), asc(hubCapabilities.version));

/** Registered capability names of several identities (oldest registration first). */
export const capabilityNames = (tx: Tx, identityIds: string[]) =>
  identityIds.length === 0
    ? Promise.resolve([])
    : tx
        .select({ identityId: hubCapabilities.identityId, name: hubCapabilities.name })
        .from(hubCapabilities)
        .where(inArray(hubCapabilities.identityId, identityIds))
        .orderBy(asc(hubCapabilities.registeredAt), asc(hubCapabilities.name));

/** Set `certification_tier` of the identity's capabilities that have an SLA. */
export const certifyCapabilities = (tx: Tx, identityId: string, tier: TrustTier) =>
  tx
    .update(hubCapabilities)
    .set({ certificationTier: tier })
    .where(and(eq(hubCapabilities.identityId, identityId), sql`${hubCapabilities.sla} is not null`));

export const insertTierChange = (tx: Tx, row: typeof hubTierChanges.$inferInsert) => tx.insert(hubTierChanges).values(row);

// ---- profiles and search ------------------------------------------------------------------

/** An identity with its bound device's enrolment and last-seen times (null without a live device). */
export interface ProfileRow {
  identity: HubIdentityRow;
  enrolledAt: Date | null;
  lastSeen: Date | null;
}

/** Search filters (contract §4.10). */
export interface SearchFilter {
  /** Free text (websearch syntax) over `search_document`. */
  text?: string;
  /** Minimum tier. */
  minTier: TrustTier;
  /** A capability name (case-insensitive), named at registration or registered. */
  capability?: string;
  limit: number;
}

const profileSelect = (tx: Tx) =>
  tx
    .select({ identity: hubIdentities, enrolledAt: devices.enrolledAt, lastSeen: devices.lastSeen })
    .from(hubIdentities)
    .leftJoin(devices, and(eq(devices.id, hubIdentities.deviceId), isNull(devices.deletedAt)));

/** One identity's profile row by (lowercase) address; platform-wide inside crossTenant. */
export async function getProfileRow(tx: Tx, hubAddress: string): Promise<ProfileRow | undefined> {
  const [row] = await profileSelect(tx).where(eq(hubIdentities.hubAddress, hubAddress));
  return row;
}

const boundDevice = alias(devices, 'bound_device');

/**
 * Identities verify-agent does not call `suspended` (verification/service.ts `agentStatus`):
 * active, with no bound device or one neither revoked nor deleted. The marketplace keeps the same
 * rule in `marketplace_listings.agent_suspended` (migration 0045).
 */
function notSuspended(tx: Tx): SQL {
  const badDevice = tx
    .select({ one: sql`1` })
    .from(boundDevice)
    .where(and(eq(boundDevice.id, hubIdentities.deviceId), or(eq(boundDevice.status, 'REVOKED'), isNotNull(boundDevice.deletedAt))));
  return and(eq(hubIdentities.status, 'active'), notExists(badDevice))!;
}

/**
 * Identities matching `f` that are not suspended ({@link notSuspended}), run inside crossTenant:
 * search is platform-wide. With text: `search_document @@ websearch_to_tsquery(…)`, ranked by
 * `ts_rank` (best first), ties by address; without text: by address.
 */
export function searchProfileRows(tx: Tx, f: SearchFilter): Promise<ProfileRow[]> {
  const where: SQL[] = [notSuspended(tx)];
  const query = f.text === undefined ? undefined : sql`websearch_to_tsquery(${CFG}, ${f.text})`;
  if (query) where.push(sql`${hubIdentities.searchDocument} @@ ${query}`);
  const minRank = tierRank(f.minTier);
  if (minRank > 0) where.push(inArray(hubIdentities.trustTier, [...TIERS.slice(minRank)]));
  if (f.capability !== undefined) {
    where.push(sql`(
      exists (select 1 from jsonb_array_elements_text(${hubIdentities.capabilities}) as n where lower(n) = lower(${f.capability}))
      or exists (select 1 from ${hubCapabilities} where ${hubCapabilities.identityId} = ${hubIdentities.id} and lower(${hubCapabilities.name}) = lower(${f.capability})))`);
  }
  const order = query ? [desc(sql`ts_rank(${hubIdentities.searchDocument}, ${query})`), asc(hubIdentities.hubAddress)] : [asc(hubIdentities.hubAddress)];
  return profileSelect(tx)
    .where(and(...where))
    .orderBy(...order)
    .limit(f.limit);
}

/** Filters of a platform operator's review list (docs/decisions.md "Platform operators and operator tier grants"). */
export interface ReviewFilter {
  /** Exactly this tier. */
  tier?: TrustTier;
  /** A case-insensitive part of the hub address or display name. */
  text?: string;
  /** Keyset position (creation time at millisecond precision, id) to continue after. */
  after?: { at: Date; id: string };
  limit: number;
}

/** Creation time at the millisecond precision of the keyset cursors (lib/paging.ts). */
const createdMs = sql`date_trunc('milliseconds', ${hubIdentities.createdAt})`;

/**
 * Identities of every tenant that are not suspended ({@link notSuspended}), newest first (ties by
 * id), matching `f`; run inside crossTenant.
 */
export function reviewProfileRows(tx: Tx, f: ReviewFilter): Promise<ProfileRow[]> {
  const where: SQL[] = [notSuspended(tx)];
  if (f.tier) where.push(eq(hubIdentities.trustTier, f.tier));
  if (f.text) {
    const part = f.text.toLowerCase();
    where.push(or(sql`strpos(lower(${hubIdentities.hubAddress}), ${part}) > 0`, sql`strpos(lower(${hubIdentities.displayName}), ${part}) > 0`)!);
  }
  if (f.after) where.push(sql`(${createdMs}, ${hubIdentities.id}) < (${f.after.at.toISOString()}::timestamptz, ${f.after.id}::uuid)`);
  return profileSelect(tx)
    .where(and(...where))
    .orderBy(desc(createdMs), desc(hubIdentities.id))
    .limit(f.limit);
}

/**
 * True when `err` (or its drizzle-wrapped `cause`) is a PostgreSQL unique violation (23505) of
 * the named constraint or index.
 */
export function isUniqueViolation(err: unknown, constraint: string): boolean {
  for (let e: unknown = err, depth = 0; e && depth < 3; e = (e as { cause?: unknown }).cause, depth++) {
    const x = e as { code?: unknown; constraint?: unknown; message?: unknown };
    if (x.code === '23505' && (x.constraint === constraint || (typeof x.message === 'string' && x.message.includes(constraint)))) return true;
  }
  return false;
}

/**
 * Listing queries (design §8.23, §8.35). Run in a tenant scope (the tenant's own listings, plus
 * every published listing through the public-read policy of migration 0021) or in the anonymous
 * scope of `withNoTenant` (published listings only).
 */
import { and, desc, eq, gte, inArray, lt, lte, not, or, sql, type SQL } from 'drizzle-orm';
import type { Tx } from '../../db/client.js';
import { marketplaceListings as L } from '../../db/schema/index.js';
import { SEARCH_CONFIG } from '../hub/index.js';
import { TRUST_TIERS as TIERS, tierRank, type TrustTier as Tier } from '@parley/protocol';

/** A stored listing. */
export type ListingRow = typeof L.$inferSelect;

const CFG = sql.raw(`'${SEARCH_CONFIG}'::regconfig`);

export const insertListing = (tx: Tx, row: typeof L.$inferInsert) => tx.insert(L).values(row).returning();

export const updateListing = (tx: Tx, id: string, set: Partial<typeof L.$inferInsert>) =>
  tx
    .update(L)
    .set({ ...set, updatedAt: new Date() })
    .where(eq(L.id, id))
    .returning();

/** One listing visible to the scope; `forUpdate` locks it (only the owning tenant can). */
export async function getListing(tx: Tx, id: string, forUpdate = false): Promise<ListingRow | undefined> {
  const q = tx.select().from(L).where(eq(L.id, id));
  const [row] = forUpdate ? await q.for('update') : await q;
  return row;
}

/**
 * Recompute `search_document` of a listing: A = title, B = category and capability names,
 * C = description (config `english`, like the hub search).
 */
export async function refreshSearchDocument(tx: Tx, id: string): Promise<void> {
  await tx.execute(sql`
    update marketplace_listings set search_document =
      setweight(to_tsvector(${CFG}, title), 'A')
      || setweight(to_tsvector(${CFG}, category || ' ' || coalesce((select string_agg(c, ' ') from jsonb_array_elements_text(capabilities) c), '')), 'B')
      || setweight(to_tsvector(${CFG}, description), 'C')
    where id = ${id}`);
}

/** Filters of a search (the query of `GET /marketplace/listings`, validated). */
export interface ListingFilter {
  text?: string | undefined;
  capability?: string | undefined;
  /** The listings of one hub identity (lowercase address). */
  hubAddress?: string | undefined;
  category?: string | undefined;
  minTier?: Tier | undefined;
  minPriceCents?: number | undefined;
  maxPriceCents?: number | undefined;
  /** The caller tenant's own listings in every status, instead of the published catalogue. */
  ownTenantId?: string | undefined;
}

/** A keyset position: by rank (text queries) or by time (published_at, or created_at for `mine`). */
export type ListingCursor = { rank: number; id: string } | { at: Date; id: string };

/**
 * The WHERE clause of a search (shared by the service and the benchmark's bare query): the
 * caller's own listings, or the catalogue — published listings of agents that verify-agent does
 * not call suspended (`agent_suspended`, migration 0045).
 */
export function listingWhere(f: ListingFilter): SQL {
  const conds: SQL[] = f.ownTenantId ? [eq(L.tenantId, f.ownTenantId)] : [eq(L.status, 'published'), eq(L.agentSuspended, false)];
  if (f.text) conds.push(sql`${L.searchDocument} @@ websearch_to_tsquery(${CFG}, ${f.text})`);
  if (f.capability) conds.push(sql`${L.capabilities} @> ${JSON.stringify([f.capability])}::jsonb`);
  if (f.hubAddress) conds.push(eq(L.hubAddress, f.hubAddress));
  if (f.category) conds.push(eq(L.category, f.category));
  if (f.minTier) conds.push(inArray(L.trustTier, TIERS.filter((t) => tierRank(t) >= tierRank(f.minTier))));
  if (f.minPriceCents !== undefined) conds.push(gte(L.priceCents, f.minPriceCents));
  if (f.maxPriceCents !== undefined) conds.push(lte(L.priceCents, f.maxPriceCents));
  return and(...conds)!;
}

/** The rank of a search's rows: `ts_rank` with a text query, 0 without. */
const rankOf = (f: ListingFilter) => (f.text ? sql<number>`ts_rank(${L.searchDocument}, websearch_to_tsquery(${CFG}, ${f.text}))::float8` : sql<number>`0::float8`);

/** The time column of a search's order: created_at for own listings, else published_at. */
const timeColOf = (f: ListingFilter) => (f.ownTenantId ? L.createdAt : L.publishedAt);

/** Rows that come after `after` in the search order of {@link searchListings}. */
function afterCursor(f: ListingFilter, after: ListingCursor): SQL | undefined {
  const rank = rankOf(f);
  const timeCol = timeColOf(f);
  return 'rank' in after
    ? sql`(${rank} < ${after.rank} or (${rank} = ${after.rank} and ${L.id} < ${after.id}))`
    : or(lt(timeCol, after.at), and(eq(timeCol, after.at), lt(L.id, after.id)));
}

/**
 * One page (`limit` rows) of a search: by `ts_rank` then id with a text query, else newest first
 * (published_at; created_at for own listings). Each row carries its rank (0 without text).
 */
export async function searchListings(tx: Tx, f: ListingFilter, after: ListingCursor | undefined, limit: number): Promise<(ListingRow & { rank: number })[]> {
  const rank = rankOf(f);
  const timeCol = timeColOf(f);
  const conds: (SQL | undefined)[] = [listingWhere(f)];
  if (after) conds.push(afterCursor(f, after));
  const order = f.text ? [desc(rank), desc(L.id)] : [desc(timeCol), desc(L.id)];
  const rows = await tx
    .select({ row: L, rank })
    .from(L)
    .where(and(...conds))
    .orderBy(...order)
    .limit(limit);
  return rows.map((r) => ({ ...r.row, rank: Number(r.rank) }));
}

/**
 * How many rows of the search `f` come before `after` or are `after` itself (the results a client
 * paging with that cursor has seen), counting no further than `cap`.
 */
export async function countThrough(tx: Tx, f: ListingFilter, after: ListingCursor, cap: number): Promise<number> {
  const seen = tx
    .select({ one: sql`1` })
    .from(L)
    .where(and(listingWhere(f), not(afterCursor(f, after) ?? sql`false`)))
    .limit(cap)
    .as('seen');
  const [row] = await tx.select({ n: sql<number>`count(*)::int` }).from(seen);
  return Number(row?.n ?? 0);
}

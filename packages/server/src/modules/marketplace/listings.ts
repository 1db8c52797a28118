/**
 * Marketplace listings (contract §2.13, §3.7, §4.16; design §8.23, §8.35). A listing rents out one of
 * the tenant's hub identities. Transitions: draft -> published (the identity is certified or
 * better, at least `min_tier`, active and bound to an agent device) -> paused -> published
 * (resume); delist from draft, published or paused (terminal); a delisted listing cannot be
 * edited. Every write appends a `listing.*` audit event in the same transaction.
 *
 * Search runs under RLS: a tenant scope sees its own listings and every published one (migration
 * 0021), the anonymous scope published ones only, in the reduced view of design §8.23 (at most 20).
 */
import { randomUUID } from 'node:crypto';
import type { CreateListingRequest, HubCapability, Listing, ListingPage, ListingSearchQuery, UpdateListingRequest } from '@parley/protocol';
import type { Db, Tx } from '../../db/client.js';
import { withNoTenant, withTenant } from '../../db/tenant.js';
import { badRequest, conflict, forbidden, notFound } from '../../lib/errors.js';
import { asUuid } from '../../lib/ids.js';
import { decodeKeyset, encodeKeyset } from '../../lib/paging.js';
import { appendAudit, type AuditEventType } from '../audit/index.js';
import { getByAddress, getHubIdentity, listCapabilities, normalizeHubAddress, toOut as toHubCapability } from '../hub/index.js';
import { asTier, tierRank } from '@parley/protocol';
import type { MarketCaller } from './caller.js';
import * as repo from './listings-repo.js';

/** Anonymous searches answer at most this many listings (design §8.23). */
export const ANONYMOUS_SEARCH_MAX = 20;
const SEARCH_DEFAULT = 20;

/** The full view of a listing (owners and authenticated callers). */
export function fullListing(r: repo.ListingRow): Listing {
  return {
    ...reducedListing(r),
    pricing: { model: r.pricingModel as Listing['pricing']['model'], price_cents: r.priceCents, currency: 'usd' },
    tenant_id: r.tenantId,
    workspace_id: r.workspaceId,
    sla: r.sla as Listing['sla'] & object,
    term_hours: r.termHours,
    min_tier: r.minTier as 'certified' | 'enterprise',
    min_score: r.minScore,
    created_at: r.createdAt.toISOString(),
    updated_at: r.updatedAt.toISOString(),
  };
}

/** The reduced, anonymous view (design §8.23): no tenant, workspace, SLA or term; pricing model and cents only. */
export function reducedListing(r: repo.ListingRow): Listing {
  return {
    listing_id: r.id,
    hub_address: r.hubAddress,
    title: r.title,
    description: r.description,
    category: r.category,
    capabilities: r.capabilities as string[],
    pricing: { model: r.pricingModel as Listing['pricing']['model'], price_cents: r.priceCents },
    status: r.status as Listing['status'],
    trust_tier: asTier(r.trustTier),
    trust_score: r.trustScore,
    published_at: r.publishedAt?.toISOString() ?? null,
  };
}

const encodeCursor = (r: repo.ListingRow & { rank: number }, byRank: boolean, own: boolean): string =>
  byRank ? `r${r.rank}_${r.id}` : `t${encodeKeyset((own ? r.createdAt : r.publishedAt) ?? r.createdAt, r.id)}`;

function decodeCursor(cursor: string, byRank: boolean): repo.ListingCursor {
  if (byRank) {
    const m = /^r([0-9.eE+-]+)_(.+)$/.exec(cursor);
    const id = asUuid(m?.[2]);
    const rank = Number(m?.[1]);
    if (!m || !id || !Number.isFinite(rank)) throw badRequest('cursor must be a next_cursor value of the same query');
    return { rank, id };
  }
  if (!cursor.startsWith('t')) throw badRequest('cursor must be a next_cursor value of the same query');
  return decodeKeyset(cursor.slice(1));
}

/**
 * Who may create and change listings (design §8.23 "workspace auth"): an owner of the tenant, or an
 * API key that names its workspace with `X-Workspace-Id`. @throws 403 for any other caller.
 */
function assertListingWriter(c: MarketCaller): void {
  if (c.kind === 'owner' || (c.kind === 'apikey' && c.workspaceId)) return;
  throw forbidden('listings are created and changed by an owner token, or by an API key with X-Workspace-Id naming a workspace its agent belongs to (design §8.23)');
}

export class ListingService {
  constructor(private readonly db: Db) {}

  /**
   * Create a draft for the tenant's identity `hub_address`. An API key with a workspace files it
   * under that workspace. @throws 403 an API key without `X-Workspace-Id`; 404 no such identity
   * in the tenant; 400 bad pricing term.
   */
  async create(c: MarketCaller, input: CreateListingRequest): Promise<Listing> {
    assertListingWriter(c);
    const address = normalizeHubAddress(input.hub_address);
    if (!address) throw badRequest('hub_address is not a valid hub address');
    return withTenant(this.db, c.tenantId, async (tx) => {
      const identity = await getByAddress(tx, address);
      if (!identity) throw notFound('hub identity');
      const [row] = await repo.insertListing(tx, {
        id: randomUUID(),
        tenantId: c.tenantId,
        workspaceId: c.workspaceId,
        identityId: identity.id,
        hubAddress: identity.hubAddress,
        title: input.title.trim(),
        description: input.description ?? '',
        category: input.category,
        capabilities: [...new Set(input.capabilities ?? [])],
        pricingModel: input.pricing.model,
        priceCents: input.pricing.price_cents,
        sla: input.sla ?? {},
        termHours: input.term_hours ?? null,
        minTier: input.min_tier ?? 'certified',
        minScore: input.min_score ?? null,
        trustTier: identity.trustTier,
        trustScore: identity.trustScore,
        createdBy: c.actor,
      });
      await repo.refreshSearchDocument(tx, row!.id);
      await appendAudit(tx, c.tenantId, { type: 'listing.created', actor: c.actor, subject: row!.id, data: { hub_address: row!.hubAddress, status: 'draft' } });
      return fullListing(row!);
    });
  }

  /** Update a listing of the tenant that is not delisted. @throws 404; 403 another workspace's key; 409 delisted. */
  update(c: MarketCaller, id: string, patch: UpdateListingRequest): Promise<Listing> {
    return this.mutate(c, id, 'listing.updated', async (tx, l) => {
      if (l.status === 'delisted') throw conflict('a delisted listing cannot be changed');
      const set: Partial<repo.ListingRow> = {};
      if (patch.title !== undefined) set.title = patch.title.trim();
      if (patch.description !== undefined) set.description = patch.description;
      if (patch.category !== undefined) set.category = patch.category;
      if (patch.capabilities !== undefined) set.capabilities = [...new Set(patch.capabilities)];
      if (patch.pricing !== undefined) Object.assign(set, { pricingModel: patch.pricing.model, priceCents: patch.pricing.price_cents });
      if (patch.sla !== undefined) set.sla = patch.sla;
      if (patch.term_hours !== undefined) set.termHours = patch.term_hours;
      if (patch.min_tier !== undefined) set.minTier = patch.min_tier;
      if (patch.min_score !== undefined) set.minScore = patch.min_score;
      const [row] = await repo.updateListing(tx, l.id, set);
      await repo.refreshSearchDocument(tx, l.id);
      return { row: row!, data: { fields: Object.keys(patch).sort() } };
    });
  }

  /**
   * draft -> published. @throws 409 not a draft, or the identity is below certified / `min_tier`,
   * suspended, or bound to no agent device (a rental needs the agent).
   */
  publish(c: MarketCaller, id: string): Promise<Listing> {
    return this.mutate(c, id, 'listing.published', async (tx, l) => {
      if (l.status !== 'draft') throw conflict(`only a draft can be published; this listing is ${l.status}`);
      const identity = await getHubIdentity(tx, l.identityId);
      if (!identity || identity.status !== 'active') throw conflict('the listed hub identity is not active');
      const tier = asTier(identity.trustTier);
      if (tierRank(tier) < tierRank('certified')) throw conflict(`only a certified or enterprise identity may be listed (contract §3.3); ${identity.hubAddress} is ${tier}: certify it first`);
      if (tierRank(tier) < tierRank(l.minTier)) throw conflict(`the listing requires ${l.minTier}; ${identity.hubAddress} is ${tier}`);
      if (!identity.deviceId) throw conflict(`${identity.hubAddress} is bound to no agent device; a rental needs one`);
      const [row] = await repo.updateListing(tx, l.id, { status: 'published', publishedAt: new Date(), trustTier: identity.trustTier, trustScore: identity.trustScore });
      return { row: row!, data: { from: 'draft', to: 'published', tier } };
    });
  }

  /** published -> paused. @throws 409 otherwise. */
  pause(c: MarketCaller, id: string): Promise<Listing> {
    return this.simple(c, id, 'listing.paused', ['published'], 'paused');
  }

  /** paused -> published (design §8.35). @throws 409 otherwise. */
  resume(c: MarketCaller, id: string): Promise<Listing> {
    return this.simple(c, id, 'listing.resumed', ['paused'], 'published');
  }

  /** draft | published | paused -> delisted (terminal, design §8.9). @throws 409 already delisted. */
  delist(c: MarketCaller, id: string): Promise<Listing> {
    return this.simple(c, id, 'listing.delisted', ['draft', 'published', 'paused'], 'delisted');
  }

  /**
   * One listing: the tenant's own in any status, others' when published; anonymous callers see
   * published ones in the reduced view. @throws 404 otherwise.
   */
  async get(c: MarketCaller | null, id: string): Promise<Listing> {
    const row = await this.scope(c, (tx) => repo.getListing(tx, id));
    if (!row) throw notFound('listing');
    return c ? fullListing(row) : reducedListing(row);
  }

  /**
   * The registered capabilities a listing rents out: those of its hub identity whose names the
   * listing names, oldest first, with version, input schema, SLA and certification tier (read in
   * the developer tenant's scope). @throws 404 the listing is neither published nor the caller's.
   */
  async capabilities(c: MarketCaller, id: string): Promise<HubCapability[]> {
    const row = await this.scope(c, (tx) => repo.getListing(tx, id));
    if (!row) throw notFound('listing');
    const names = new Set(row.capabilities as string[]);
    const caps = await withTenant(this.db, row.tenantId, (tx) => listCapabilities(tx, row.identityId));
    return caps.filter((cap) => names.has(cap.name)).map(toHubCapability);
  }

  /**
   * Search (design §8.35): published listings by free text (relevance order), capability,
   * category, minimum live tier and price range, newest first without text; `mine` lists the
   * caller tenant's own listings in every status. Anonymous: reduced view, and at most 20 results
   * of a search in total: pages after a cursor count what came before it (on the database, so a
   * made-up cursor gains nothing) and stop at the 20th result, without a further `next_cursor`.
   * @throws 400 bad cursor, `mine` without credentials, or min price above max price.
   */
  async search(c: MarketCaller | null, q: ListingSearchQuery): Promise<ListingPage> {
    if (q.mine && !c) throw badRequest('mine=true needs credentials');
    if (q.min_price_cents !== undefined && q.max_price_cents !== undefined && q.min_price_cents > q.max_price_cents) throw badRequest('min_price_cents is above max_price_cents');
    const requested = Math.min(q.limit ?? SEARCH_DEFAULT, c ? 100 : ANONYMOUS_SEARCH_MAX);
    const byRank = q.query !== undefined;
    const own = q.mine === true;
    const filter: repo.ListingFilter = {
      text: q.query,
      capability: q.capability,
      hubAddress: q.hub_address?.toLowerCase(),
      category: q.category,
      minTier: q.tier,
      minPriceCents: q.min_price_cents,
      maxPriceCents: q.max_price_cents,
      ownTenantId: own ? c!.tenantId : undefined,
    };
    const after = q.cursor !== undefined ? decodeCursor(q.cursor, byRank) : undefined;
    const { rows, limit, capped } = await this.scope(c, async (tx) => {
      // Anonymous: what is left of the 20 after the results before the cursor.
      const left = c ? Infinity : ANONYMOUS_SEARCH_MAX - (after ? await repo.countThrough(tx, filter, after, ANONYMOUS_SEARCH_MAX) : 0);
      const limit = Math.min(requested, left);
      return { rows: limit > 0 ? await repo.searchListings(tx, filter, after, limit + 1) : [], limit, capped: limit === left };
    });
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    const more = rows.length > limit && !capped;
    return { listings: page.map((r) => (c ? fullListing(r) : reducedListing(r))), next_cursor: more && last ? encodeCursor(last, byRank, own) : null };
  }

  private scope<T>(c: MarketCaller | null, fn: (tx: Tx) => Promise<T>): Promise<T> {
    return c ? withTenant(this.db, c.tenantId, fn) : withNoTenant(this.db, fn);
  }

  private simple(c: MarketCaller, id: string, type: AuditEventType, from: string[], to: string): Promise<Listing> {
    return this.mutate(c, id, type, async (tx, l) => {
      if (!from.includes(l.status)) throw conflict(`listing is ${l.status}; ${type.split('.')[1]} needs ${from.join(' or ')}`);
      const [row] = await repo.updateListing(tx, l.id, { status: to, ...(to === 'delisted' ? { delistedAt: new Date() } : {}) });
      return { row: row!, data: { from: l.status, to } };
    });
  }

  /** Lock the tenant's listing, check the caller may write it (403 otherwise), apply `fn`, audit `type`. */
  private mutate(
    c: MarketCaller,
    id: string,
    type: AuditEventType,
    fn: (tx: Tx, l: repo.ListingRow) => Promise<{ row: repo.ListingRow; data: Record<string, unknown> }>,
  ): Promise<Listing> {
    assertListingWriter(c);
    return withTenant(this.db, c.tenantId, async (tx) => {
      const l = await repo.getListing(tx, id, true);
      if (!l || l.tenantId !== c.tenantId) throw notFound('listing');
      if (c.kind === 'apikey' && l.workspaceId && c.workspaceId !== l.workspaceId) throw forbidden('this listing belongs to another workspace: send its X-Workspace-Id');
      const { row, data } = await fn(tx, l);
      await appendAudit(tx, c.tenantId, { type, actor: c.actor, subject: l.id, data });
      return fullListing(row);
    });
  }
}

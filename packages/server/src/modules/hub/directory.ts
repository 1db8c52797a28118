/**
 * Public profiles and search of hub identities (contract §2.8 public profile, §4.10; design §8.15).
 *
 * - Profile: hub_address, display_name, description, trust_tier, tier_source (`operator` while a
 *   platform operator's tier grant holds, design §8.25), trust_score (the stored score,
 *   else contract §3.9's 0.5, trust/types.ts NEUTRAL_SCORE, until the trust engine computes one),
 *   capabilities (the names given at registration, then registered capability names not among
 *   them), enrolled_at (the bound device's enrolment, else the identity's creation), last_active
 *   (the bound device's last_seen, else null). Reading is public and crosses tenants (addresses
 *   are public and unique platform-wide); the owner updates display_name and description.
 * - Search: PostgreSQL full-text search over `search_document` (repo.ts), suspended identities
 *   excluded; anonymous callers get at most {@link ANONYMOUS_SEARCH_LIMIT} results, authenticated
 *   callers up to `limit`.
 */
import { ANONYMOUS_SEARCH_LIMIT, DEFAULT_SEARCH_LIMIT, type HubProfile, type HubSearchQuery, type TierSource, type TrustTier, type UpdateHubProfileRequest } from '@parley/protocol';
import type { Db, Tx } from '../../db/client.js';
import { crossTenant, withTenant } from '../../db/tenant.js';
import { badRequest, notFound } from '../../lib/errors.js';
import { appendAudit } from '../audit/index.js';
import { NEUTRAL_SCORE } from '@parley/protocol';
import * as repo from './repo.js';
import { normalizeHubAddress, ownIdentityAt } from './service.js';

export { ANONYMOUS_SEARCH_LIMIT, DEFAULT_SEARCH_LIMIT } from '@parley/protocol';

const PUBLIC_READ = 'hub profiles and search are public; addresses are unique platform-wide (contract §2.8, §4.10)';

/** Profiles of `rows`, in order, with their registered capability names merged in. */
export async function toProfiles(tx: Tx, rows: repo.ProfileRow[]): Promise<HubProfile[]> {
  const registered = new Map<string, string[]>();
  const names = await repo.capabilityNames(tx, rows.map((r) => r.identity.id));
  for (const c of names) registered.set(c.identityId, [...(registered.get(c.identityId) ?? []), c.name]);
  return rows.map(({ identity: h, enrolledAt, lastSeen }) => ({
    hub_address: h.hubAddress,
    display_name: h.displayName,
    description: h.description,
    trust_tier: h.trustTier as TrustTier,
    tier_source: h.tierSource as TierSource,
    trust_score: h.trustScore ?? NEUTRAL_SCORE,
    capabilities: [...new Set([...(h.capabilities as string[]), ...(registered.get(h.id) ?? [])])],
    enrolled_at: (enrolledAt ?? h.createdAt).toISOString(),
    last_active: lastSeen?.toISOString() ?? null,
  }));
}

async function profileAt(tx: Tx, hubAddress: string): Promise<HubProfile | undefined> {
  const row = await repo.getProfileRow(tx, hubAddress);
  return row ? (await toProfiles(tx, [row]))[0] : undefined;
}

export class HubDirectoryService {
  constructor(private readonly db: Db) {}

  /** The public profile at `address` (any case, any tenant). @throws 404 unknown or malformed address. */
  async profile(address: string): Promise<HubProfile> {
    const hubAddress = normalizeHubAddress(address);
    const profile = hubAddress ? await crossTenant(this.db, PUBLIC_READ, (tx) => profileAt(tx, hubAddress)) : undefined;
    if (!profile) throw notFound('hub identity');
    return profile;
  }

  /**
   * Update display_name and/or description of the tenant's identity; the search document is
   * refreshed and `hub.profile_updated` (the changed field names, not their values) recorded by
   * `actor` in the same transaction. @returns the updated profile.
   * @throws 400 neither field given; 404 unknown or another tenant's address.
   */
  async updateProfile(tenantId: string, address: string, update: UpdateHubProfileRequest, actor = 'owner'): Promise<HubProfile> {
    if (update.display_name === undefined && update.description === undefined) throw badRequest('give display_name and/or description');
    return withTenant(this.db, tenantId, async (tx) => {
      const identity = await ownIdentityAt(tx, address, true);
      await repo.updateHubIdentity(tx, identity.id, {
        ...(update.display_name !== undefined ? { displayName: update.display_name } : {}),
        // "" clears the description as null does (bodies are not type-coerced, so "" arrives as "").
        ...(update.description !== undefined ? { description: update.description === '' ? null : update.description } : {}),
      });
      await repo.refreshSearchDocument(tx, identity.id);
      const fields = (['display_name', 'description'] as const).filter((f) => update[f] !== undefined);
      await appendAudit(tx, tenantId, { type: 'hub.profile_updated', actor, subject: identity.id, data: { hub_address: identity.hubAddress, fields } });
      return (await profileAt(tx, identity.hubAddress))!;
    });
  }

  /**
   * Search active identities platform-wide (contract §4.10). A blank `query` is no text filter.
   * @param authenticated false for anonymous callers: at most {@link ANONYMOUS_SEARCH_LIMIT} results.
   */
  search(q: HubSearchQuery, authenticated: boolean): Promise<HubProfile[]> {
    const requested = q.limit ?? DEFAULT_SEARCH_LIMIT;
    const text = q.query?.trim();
    const filter: repo.SearchFilter = {
      minTier: q.tier ?? 'unverified',
      limit: authenticated ? requested : Math.min(requested, ANONYMOUS_SEARCH_LIMIT),
      ...(text ? { text } : {}),
      ...(q.capability !== undefined ? { capability: q.capability } : {}),
    };
    return crossTenant(this.db, PUBLIC_READ, async (tx) => toProfiles(tx, await repo.searchProfileRows(tx, filter)));
  }
}

/**
 * A platform operator's certification review list: `GET /api/v1/hub/review` (docs/decisions.md
 * "Platform operators and operator tier grants"). Hub identities of every tenant that are not
 * suspended, newest first, each as its public profile (directory.ts) with what a tier grant
 * needs: the identity's id, its DID and the current grant's reason and expiry. The caller is
 * checked to be an operator by the route (`operatorOf`). The answer holds public profile data and
 * the operators' own grants, so reading it is not audited (the grant is, in the identity's chain).
 */
import type { HubReviewEntry, HubReviewPage, HubReviewQuery } from '@parley/protocol';
import type { Db } from '../../db/client.js';
import { crossTenant } from '../../db/tenant.js';
import { decodeKeyset, encodeKeyset, pageLimit } from '../../lib/paging.js';
import { toProfiles } from './directory.js';
import * as repo from './repo.js';
import { hubDid } from './service.js';

/**
 * One page of the review list for query `q` (`tier` exact, `query` a part of the address or
 * display name, `limit` within `limits`, `cursor` a previous `next_cursor`).
 * @throws 400 for a `cursor` that is not a `next_cursor` value.
 */
export async function reviewIdentities(db: Db, q: HubReviewQuery, limits: { listDefault: number; listMax: number }): Promise<HubReviewPage> {
  const limit = pageLimit(q.limit, limits);
  const text = q.query?.trim();
  const filter: repo.ReviewFilter = {
    limit: limit + 1,
    ...(q.tier ? { tier: q.tier } : {}),
    ...(text ? { text } : {}),
    ...(q.cursor !== undefined ? { after: decodeKeyset(q.cursor) } : {}),
  };
  return crossTenant(db, "platform operators review every tenant's hub identities before a tier grant", async (tx) => {
    const rows = await repo.reviewProfileRows(tx, filter);
    const page = rows.slice(0, limit);
    const profiles = await toProfiles(tx, page);
    const identities: HubReviewEntry[] = page.map(({ identity: h }, i) => ({
      ...profiles[i]!,
      id: h.id,
      did: hubDid(h.hubAddress),
      tier_grant_reason: h.tierSource === 'operator' ? h.tierGrantReason : null,
      tier_grant_expires_at: h.tierSource === 'operator' ? (h.tierGrantExpiresAt?.toISOString() ?? null) : null,
      created_at: h.createdAt.toISOString(),
    }));
    const last = page.at(-1);
    return { identities, next_cursor: rows.length > limit && last ? encodeKeyset(last.identity.createdAt, last.identity.id) : null };
  });
}

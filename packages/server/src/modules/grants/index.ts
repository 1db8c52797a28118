/**
 * Skill Permission Tokens and the skill policy pipeline (design §8.6, §8.7): the area's public
 * surface. The marketplace issues rental grants through it; trust revokes grants.
 */
import { API_PREFIX, type Area, type Platform } from '../../http/area.js';
import { SptKeys } from '../../keys/index.js';
import type { PolicyService } from '../policies/index.js';
import type { SpendService } from '../spend/index.js';
import { issueRentalGrant, rentalGrantToken, revokeRentalGrant } from './rental.js';
import { countActiveGrants, lockIdentitiesOfDevice, revokeAllGrantsOf, revokeGrantsAboveTier } from './repo.js';
import { grantRoutes } from './routes.js';
import { GrantService } from './service.js';
import { SptTokens } from './tokens.js';

export { countActiveGrants, issueRentalGrant, lockIdentitiesOfDevice, rentalGrantToken, revokeAllGrantsOf, revokeGrantsAboveTier, revokeRentalGrant };
export { SptTokens };

/** The grants area and the token signer (the marketplace signs rental grants with it). */
export interface GrantsArea extends Area {
  tokens: SptTokens;
}

/** Grants signed as `issuerDid`; the SPT key is shared by all instances (platform_keys). */
export async function createGrants(d: Platform & { issuerDid: string; policies: PolicyService; spend: SpendService }): Promise<GrantsArea> {
  const { config } = d;
  const keys = new SptKeys(d.db, d.secrets, d.keyRefreshMs);
  await keys.init();
  const tokens = new SptTokens(keys, d.issuerDid);
  const grants = new GrantService({
    db: d.db,
    keys,
    tokens,
    limiter: d.perMinuteLimiter('parley-skill', config.rateLimits.skillChecksPerMin),
    checksPerMin: config.rateLimits.skillChecksPerMin,
    publicUrl: config.publicUrl,
    ttlSec: config.sptTtlSec,
    listDefault: config.limits.listDefault,
    listMax: config.limits.listMax,
    policies: d.policies,
    spend: d.spend,
  });
  return {
    tokens,
    async routes(app) {
      await app.register(grantRoutes, { prefix: API_PREFIX, grants, rateLimits: config.rateLimits });
    },
  };
}

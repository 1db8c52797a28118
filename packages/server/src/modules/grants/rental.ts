/**
 * Skill Permission Tokens of marketplace rentals (contract §4.16 "renting … issues the renter an SPT";
 * design §8.7, §8.29). One SPT per rental, issued by the platform to the rented agent's DID for
 * the listed skills (`skill` = the capability names, space-separated like an OAuth scope; a
 * validation naming one of them passes), living until the rental's end. Its row sits in the
 * developer tenant's `skill_grants` (bound to the agent device), so the revocation list, tier
 * downgrades and device revocation apply to it like to any grant; the rental revokes it when it
 * is suspended or ends.
 */
import { randomUUID } from 'node:crypto';
import type { Tx } from '../../db/client.js';
import { appendAudit } from '../audit/index.js';
import { hubDid } from '../hub/index.js';
import { asTier } from '@parley/protocol';
import * as repo from './repo.js';
import type { SptTokens } from './tokens.js';

/** A rental's SPT: its id (`jti`), the token and its expiry. */
export interface RentalGrant {
  jti: string;
  token: string;
  expiresAt: Date;
}

/**
 * Issue the rental's SPT inside `tx`, which must be scoped to the developer tenant. Audited as
 * `grant.issued` (actor `system`, data with the rental id; never the token).
 */
export async function issueRentalGrant(
  tx: Tx,
  tokens: SptTokens,
  r: { developerTenantId: string; deviceId: string; hubAddress: string; tier: string; skills: string[]; audience: string; rentalId: string; expiresAt: Date },
): Promise<RentalGrant> {
  const jti = randomUUID();
  const now = new Date();
  const skill = r.skills.length > 0 ? r.skills.join(' ') : 'marketplace';
  const tier = asTier(r.tier);
  const subject = hubDid(r.hubAddress);
  const token = await tokens.sign({ sub: subject, skill, tier, aud: r.audience, jti, iat: Math.floor(now.getTime() / 1000), exp: Math.floor(r.expiresAt.getTime() / 1000) });
  await repo.insertGrant(tx, { jti, tenantId: r.developerTenantId, deviceId: r.deviceId, subject, skill, tier, audience: r.audience, issuedBy: `rental:${r.rentalId}`, issuedAt: now, expiresAt: r.expiresAt });
  await appendAudit(tx, r.developerTenantId, { type: 'grant.issued', actor: 'system', subject: jti, data: { device_id: r.deviceId, skill, tier, rental_id: r.rentalId, expires_at: r.expiresAt.toISOString() } });
  return { jti, token, expiresAt: r.expiresAt };
}

/** Revoke a rental's SPT inside `tx` (developer scope) when still active; audited as `grant.revoked`. */
export async function revokeRentalGrant(tx: Tx, jti: string, reason: string): Promise<void> {
  const g = await repo.getGrant(tx, jti, true);
  if (!g || g.revokedAt) return;
  await repo.revokeGrant(tx, jti, reason, new Date());
  await appendAudit(tx, g.tenantId, { type: 'grant.revoked', actor: 'system', subject: jti, data: { device_id: g.deviceId, reason } });
}

/**
 * The token of a stored rental grant, re-signed from its row (nothing secret is stored: Ed25519
 * signatures are deterministic, so the same claims give the same JWT). Null when the grant is
 * revoked or expired, or not visible to the scope of `tx`.
 */
export async function rentalGrantToken(tx: Tx, tokens: SptTokens, jti: string): Promise<RentalGrant | null> {
  const g = await repo.getGrant(tx, jti);
  if (!g || g.revokedAt || g.expiresAt.getTime() <= Date.now()) return null;
  const token = await tokens.sign({ sub: g.subject, skill: g.skill, tier: asTier(g.tier), aud: g.audience, jti: g.jti, iat: Math.floor(g.issuedAt.getTime() / 1000), exp: Math.floor(g.expiresAt.getTime() / 1000) });
  return { jti: g.jti, token, expiresAt: g.expiresAt };
}

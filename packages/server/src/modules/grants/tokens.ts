/**
 * Skill Permission Tokens as JWTs (design §8.7), signed and checked with `jose` only.
 *
 * Header `{alg: "EdDSA", kid, typ: "spt+jwt"}` (explicit typing, RFC 8725 §3.11, so an SPT is
 * never mistaken for another JWT of the service). Claims: `iss` the platform DID
 * (`did:hub:<PLATFORM_HUB_ADDRESS>`), `sub` the agent's DID (`did:hub:<address>`), `skill`,
 * `tier` (the agent's tier at issue), `aud` (one string), `jti` (UUID = `skill_grants.jti`),
 * `iat` and `exp` (NumericDate, seconds).
 */
import type { GrantClaims } from '@parley/protocol';
import { compactVerify, SignJWT } from 'jose';
import { UUID_RE } from '../../lib/ids.js';
import { TRUST_TIERS as TIERS, type TrustTier as Tier } from '@parley/protocol';
import type { SptKeys } from '../../keys/index.js';

/** The JOSE `typ` header of an SPT. */
export const SPT_TYP = 'spt+jwt';

/** The claims of an SPT (times in seconds since the epoch): the contract's `GrantClaims`. */
export type SptClaims = GrantClaims;

const isString = (v: unknown): v is string => typeof v === 'string' && v.length > 0;
const isTime = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0;

/** The payload as SptClaims when every claim is present with the right type, else null. */
function asClaims(payload: unknown): SptClaims | null {
  if (payload === null || typeof payload !== 'object') return null;
  const p = payload as Record<string, unknown>;
  const ok =
    isString(p.iss) &&
    isString(p.sub) &&
    isString(p.skill) &&
    TIERS.includes(p.tier as Tier) &&
    isString(p.aud) &&
    isString(p.jti) &&
    UUID_RE.test(p.jti) &&
    isTime(p.iat) &&
    isTime(p.exp);
  if (!ok) return null;
  return { iss: p.iss as string, sub: p.sub as string, skill: p.skill as string, tier: p.tier as Tier, aud: p.aud as string, jti: (p.jti as string).toLowerCase(), iat: p.iat as number, exp: p.exp as number };
}

export class SptTokens {
  /**
   * @param keys the loaded signing key.
   * @param issuer the platform DID, the `iss` of every SPT.
   */
  constructor(
    private readonly keys: SptKeys,
    readonly issuer: string,
  ) {}

  /** Sign an SPT with these claims (`iss` is the platform DID). */
  async sign(claims: Omit<SptClaims, 'iss'>): Promise<string> {
    const { kid, signingKey } = await this.keys.current();
    return new SignJWT({ skill: claims.skill, tier: claims.tier })
      .setProtectedHeader({ alg: 'EdDSA', kid, typ: SPT_TYP })
      .setIssuer(this.issuer)
      .setSubject(claims.sub)
      .setAudience(claims.aud)
      .setJti(claims.jti)
      .setIssuedAt(claims.iat)
      .setExpirationTime(claims.exp)
      .sign(signingKey);
  }

  /**
   * The claims of `token` when it is an SPT of this service: a compact JWS whose EdDSA signature
   * verifies under the SPT key its header `kid` names (the active key or a previous one not yet
   * retired, keys.ts), with header `typ` `spt+jwt`, `iss` the platform DID and every
   * claim of {@link SptClaims} well-typed. Null otherwise (never throws). Expiry, revocation,
   * skill and audience are NOT checked here: callers report them as separate checks.
   */
  async verifySignature(token: string): Promise<SptClaims | null> {
    try {
      const { payload, protectedHeader } = await compactVerify(
        token,
        async (header) => {
          const key = await this.keys.verifyingKey(header.kid);
          if (!key) throw new Error('unknown SPT kid');
          return key;
        },
        { algorithms: ['EdDSA'] },
      );
      if (protectedHeader.typ !== SPT_TYP) return null;
      const claims = asClaims(JSON.parse(new TextDecoder().decode(payload)));
      return claims && claims.iss === this.issuer ? claims : null;
    } catch {
      return null;
    }
  }
}

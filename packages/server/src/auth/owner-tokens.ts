/**
 * Owner JWT verification (design §5): jose against the identity provider's JWKS: an external
 * OIDC provider when configured, otherwise the built-in development provider. Only a token of the
 * development provider can carry its operator claim (design §8.25, {@link DEV_OPERATOR_CLAIM}).
 * A token must carry `exp` and live at most `OWNER_TOKEN_MAX_LIFETIME_SEC` ({@link lifetimeWithin}).
 */
import { createLocalJWKSet, createRemoteJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import type { OidcConfig } from '../config.js';
import { lifetimeWithin } from './token-lifetime.js';
import { DEV_IDP_AUDIENCE, DEV_IDP_ISSUER, DEV_OPERATOR_CLAIM, type DevIdentityProvider } from './dev-idp.js';

export interface OwnerClaims {
  sub: string;
  payload: JWTPayload;
  /**
   * True only when the built-in development provider signed the token and it carries
   * `parley_operator: true` ({@link DEV_OPERATOR_CLAIM}); always false for external OIDC tokens.
   */
  devOperator: boolean;
}

export class OwnerTokenVerifier {
  private readonly keySet: JWTVerifyGetKey;
  private readonly issuer: string;
  private readonly audience: string | undefined;
  /** The development provider verifies (its operator claim counts). */
  private readonly dev: boolean;
  /** Key id of the development provider's key (undefined with an external provider). */
  private readonly devKid: string | undefined;

  /**
   * @param source the identity provider whose keys sign owner tokens.
   * @param maxLifetimeSec the longest lifetime accepted (`OWNER_TOKEN_MAX_LIFETIME_SEC`), in seconds.
   */
  constructor(
    source: { oidc: OidcConfig } | { dev: DevIdentityProvider },
    private readonly maxLifetimeSec: number,
  ) {
    if ('oidc' in source) {
      this.keySet = createRemoteJWKSet(new URL(source.oidc.jwksUrl));
      this.issuer = source.oidc.issuer;
      this.audience = source.oidc.audience;
      this.dev = false;
      this.devKid = undefined;
    } else {
      this.keySet = createLocalJWKSet({ keys: [source.dev.publicJwk] });
      this.issuer = DEV_IDP_ISSUER;
      this.audience = DEV_IDP_AUDIENCE;
      this.dev = true;
      this.devKid = source.dev.publicJwk.kid;
    }
  }

  /**
   * Verify signature, issuer, audience and expiry, that `exp` is present and that the lifetime is
   * within the maximum ({@link lifetimeWithin}); undefined for any invalid token (a 401).
   */
  async verify(token: string): Promise<OwnerClaims | undefined> {
    try {
      const { payload } = await jwtVerify(token, this.keySet, {
        issuer: this.issuer,
        ...(this.audience ? { audience: this.audience } : {}),
        requiredClaims: ['exp'],
      });
      if (!lifetimeWithin(payload, this.maxLifetimeSec)) return undefined;
      if (typeof payload.sub !== 'string' || payload.sub === '' || payload.typ === 'device') return undefined;
      return { sub: payload.sub, payload, devOperator: this.dev && payload[DEV_OPERATOR_CLAIM] === true };
    } catch {
      return undefined;
    }
  }

  /**
   * The 401 detail for a token {@link verify} refused: a development-provider token signed with
   * another key than this service's (minted with another `DATA_DIR`, where the provider's key
   * lives) says so and what to do; any other refusal reads `invalid or expired token`.
   */
  refusalDetail(token: string): string {
    try {
      const { kid } = decodeProtectedHeader(token);
      if (this.dev && decodeJwt(token).iss === DEV_IDP_ISSUER && kid !== undefined && kid !== this.devKid) {
        return "owner token signed by another development identity key: this service's key is in its own DATA_DIR; mint the token with `npm run cli -- owner-token` run with the service's DATA_DIR";
      }
    } catch {
      /* not a JWT: the generic answer */
    }
    return 'invalid or expired token';
  }
}

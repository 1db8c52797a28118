/**
 * Owner JWT verification (DESIGN §5): jose against the identity provider's JWKS: an external
 * OIDC provider when configured, otherwise the built-in development provider.
 */
import { createLocalJWKSet, createRemoteJWKSet, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import type { OidcConfig } from '../config.js';
import { DEV_IDP_AUDIENCE, DEV_IDP_ISSUER, type DevIdentityProvider } from './dev-idp.js';

export interface OwnerClaims {
  sub: string;
  payload: JWTPayload;
}

export class OwnerTokenVerifier {
  private readonly keySet: JWTVerifyGetKey;
  private readonly issuer: string;
  private readonly audience: string | undefined;

  constructor(source: { oidc: OidcConfig } | { dev: DevIdentityProvider }) {
    if ('oidc' in source) {
      this.keySet = createRemoteJWKSet(new URL(source.oidc.jwksUrl));
      this.issuer = source.oidc.issuer;
      this.audience = source.oidc.audience;
    } else {
      this.keySet = createLocalJWKSet({ keys: [source.dev.publicJwk] });
      this.issuer = DEV_IDP_ISSUER;
      this.audience = DEV_IDP_AUDIENCE;
    }
  }

  /** Verify signature, issuer, audience and expiry; undefined for any invalid token. */
  async verify(token: string): Promise<OwnerClaims | undefined> {
    try {
      const { payload } = await jwtVerify(token, this.keySet, {
        issuer: this.issuer,
        ...(this.audience ? { audience: this.audience } : {}),
      });
      if (typeof payload.sub !== 'string' || payload.sub === '' || payload.typ === 'device') return undefined;
      return { sub: payload.sub, payload };
    } catch {
      return undefined;
    }
  }
}

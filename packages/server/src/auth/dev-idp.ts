/**
 * The built-in development identity provider (design §3): an Ed25519 key kept in
 * `DATA_DIR/dev-idp-key.json`, shared by the server (which verifies) and the CLI (which mints
 * owner tokens with `owner-token --sub`, platform operator tokens with `--operator`). Disabled
 * whenever `OIDC_*` is configured.
 */
import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, importJWK, SignJWT, type JWK } from 'jose';

/** Issuer and audience of development owner tokens. */
export const DEV_IDP_ISSUER = 'urn:parley:dev-idp';
export const DEV_IDP_AUDIENCE = 'parley';
/**
 * Claim (`true`) of a development owner token whose owner is a platform operator (design §8.25,
 * docs/decisions.md "Platform operators"). Honoured ONLY on tokens this provider signed
 * (owner-tokens.ts); on a token from an external OIDC provider it means nothing.
 */
export const DEV_OPERATOR_CLAIM = 'parley_operator';

interface KeyFile {
  private: JWK;
  public: JWK;
}

export class DevIdentityProvider {
  private constructor(private readonly key: KeyFile) {}

  /** Load the key from `dataDir`, creating it (atomically, first writer wins) when missing. */
  static async load(dataDir: string): Promise<DevIdentityProvider> {
    const file = path.join(dataDir, 'dev-idp-key.json');
    if (!fs.existsSync(file)) {
      fs.mkdirSync(dataDir, { recursive: true });
      const { privateKey, publicKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true });
      const kid = `dev-${randomUUID()}`;
      const body: KeyFile = {
        private: { ...(await exportJWK(privateKey)), kid, alg: 'EdDSA' },
        public: { ...(await exportJWK(publicKey)), kid, alg: 'EdDSA', use: 'sig' },
      };
      try {
        fs.writeFileSync(file, JSON.stringify(body), { flag: 'wx', mode: 0o600 });
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
    }
    return new DevIdentityProvider(JSON.parse(fs.readFileSync(file, 'utf8')) as KeyFile);
  }

  /** The public key, published in `/.well-known/jwks.json`. */
  get publicJwk(): JWK {
    return this.key.public;
  }

  /**
   * Mint an owner JWT for `sub` (e.g. an email), valid `ttlSec` seconds (default 12 h).
   * `claims` may carry a tenant claim; `operator` adds {@link DEV_OPERATOR_CLAIM} (a platform
   * operator token, design §8.25).
   */
  async mint(sub: string, opts: { ttlSec?: number; claims?: Record<string, unknown>; operator?: boolean } = {}): Promise<string> {
    const key = await importJWK(this.key.private, 'EdDSA');
    return new SignJWT({ ...opts.claims, ...(opts.operator ? { [DEV_OPERATOR_CLAIM]: true } : {}) })
      .setProtectedHeader({ alg: 'EdDSA', kid: this.key.private.kid!, typ: 'JWT' })
      .setSubject(sub)
      .setIssuer(DEV_IDP_ISSUER)
      .setAudience(DEV_IDP_AUDIENCE)
      .setIssuedAt()
      .setExpirationTime(`${opts.ttlSec ?? 12 * 3600}s`)
      .sign(key);
  }
}

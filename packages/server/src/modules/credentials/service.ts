/**
 * TrustTierCredential issuance and revocation (contract §2.10, §3.3; design §8.16). A certified or
 * enterprise hub identity obtains a credential signed by the platform issuer
 * (`did:hub:<platform address>#key-1`, Ed25519Signature2020 through @digitalbazaar/vc); each
 * issued credential is recorded in `issued_credentials` (the revocation registry), and the
 * issuing tenant may revoke it. Verification is verifier.ts.
 */
import { randomUUID } from 'node:crypto';
import type { Db } from '../../db/client.js';
import { withTenant } from '../../db/tenant.js';
import { conflict, forbidden, notFound } from '../../lib/errors.js';
import { appendAudit } from '../audit/index.js';
import { didTimestamp, getHubIdentity, hubDid, TRUST_TIERS } from '../hub/index.js';
import { CREDENTIALS_V1_URL, ED25519_2020_URL } from './contexts.js';
import type { DocumentLoader, JsonObject } from './ld.js';
import { signCredential } from './ld.js';
import type { PlatformIssuer } from './issuer.js';
import * as repo from './repo.js';
import type { IssuedCredential } from '@parley/protocol';

/** The credential type the service issues. */
export const TRUST_TIER_CREDENTIAL = 'TrustTierCredential';
const DAY_MS = 86_400_000;

export interface CredentialServiceOptions {
  db: Db;
  issuer: PlatformIssuer;
  /** URL of the service trust context (`PUBLIC_URL/contexts/trust/v1`). */
  trustContextUrl: string;
  /** A fresh offline document loader (document-loader.ts). */
  loader: () => DocumentLoader;
  /** Credential lifetime in days (`CREDENTIAL_TTL_DAYS`). */
  ttlDays: number;
}

const toOut = (r: repo.IssuedCredentialRow): IssuedCredential => ({
  credential_id: r.id,
  identity_id: r.identityId,
  type: r.type,
  subject: r.subject,
  issued_at: r.issuedAt.toISOString(),
  expires_at: r.expiresAt?.toISOString() ?? null,
  revoked_at: r.revokedAt?.toISOString() ?? null,
});

export class CredentialService {
  constructor(private readonly opts: CredentialServiceOptions) {}

  /**
   * Issue a TrustTierCredential for the tenant's identity: `@context` [credentials v1, trust
   * context, Ed25519-2020 suite], `id` `urn:uuid:<uuid>`, type [VerifiableCredential,
   * TrustTierCredential], `issuer` the platform DID, `issuanceDate` now, `expirationDate` now +
   * `ttlDays` (both whole seconds, UTC), `credentialSubject` {id: `did:hub:<address>`,
   * trustTier}, and an Ed25519Signature2020 `proof`. Recorded in `issued_credentials` in the same
   * transaction, with the `credential.issued` audit event by `actor` (credential id, identity,
   * subject DID, tier, expiry; never the proof).
   * @throws 404 unknown or another tenant's identity; 403 identity suspended, or its tier below
   *   certified (the detail names the tier).
   */
  issue(tenantId: string, identityId: string, actor = 'owner'): Promise<JsonObject> {
    return withTenant(this.opts.db, tenantId, async (tx) => {
      const identity = await getHubIdentity(tx, identityId);
      if (!identity) throw notFound('hub identity');
      if (identity.status !== 'active') throw forbidden(`hub identity is ${identity.status}; a suspended identity cannot obtain credentials`);
      if (TRUST_TIERS.indexOf(identity.trustTier as (typeof TRUST_TIERS)[number]) < TRUST_TIERS.indexOf('certified')) {
        throw forbidden(`hub identity is ${identity.trustTier}; only certified or enterprise identities can obtain a TrustTierCredential (POST /hub/identities/{id}/certify)`);
      }
      const issuedAt = new Date(Math.floor(Date.now() / 1000) * 1000);
      const expiresAt = new Date(issuedAt.getTime() + this.opts.ttlDays * DAY_MS);
      const id = `urn:uuid:${randomUUID()}`;
      const subject = hubDid(identity.hubAddress);
      const credential = {
        // The suite context is listed explicitly (vc.issue would append it anyway): Ed25519Signature2020 proofs need it.
        '@context': [CREDENTIALS_V1_URL, this.opts.trustContextUrl, ED25519_2020_URL],
        id,
        type: ['VerifiableCredential', TRUST_TIER_CREDENTIAL],
        issuer: this.opts.issuer.did,
        issuanceDate: didTimestamp(issuedAt),
        expirationDate: didTimestamp(expiresAt),
        credentialSubject: { id: subject, trustTier: identity.trustTier },
      };
      const signed = await signCredential(credential, this.opts.issuer.signingKey(), this.opts.loader());
      await repo.insertIssuedCredential(tx, { id, tenantId, identityId: identity.id, type: TRUST_TIER_CREDENTIAL, subject, issuedAt, expiresAt });
      await appendAudit(tx, tenantId, {
        type: 'credential.issued',
        actor,
        subject: id,
        data: { identity_id: identity.id, credential_subject: subject, trust_tier: identity.trustTier, expires_at: expiresAt.toISOString() },
      });
      return signed;
    });
  }

  /**
   * Revoke a credential the tenant issued: `revoked_at` = now; verification then reports
   * `revocation: false`. `credentialId` is the credential `id` (`urn:uuid:…`) or its bare UUID.
   * Records `credential.revoked` by `actor` in the same transaction.
   * @throws 404 unknown, or issued for another tenant; 409 already revoked.
   */
  revoke(tenantId: string, credentialId: string, actor = 'owner'): Promise<IssuedCredential> {
    const id = normalizeCredentialId(credentialId);
    return withTenant(this.opts.db, tenantId, async (tx) => {
      const row = await repo.getIssuedCredential(tx, id, true);
      if (!row) throw notFound('credential');
      if (row.revokedAt) throw conflict(`credential was already revoked at ${row.revokedAt.toISOString()}`);
      const [updated] = await repo.setRevoked(tx, id, new Date());
      await appendAudit(tx, tenantId, { type: 'credential.revoked', actor, subject: id, data: { identity_id: row.identityId, credential_subject: row.subject } });
      return toOut(updated!);
    });
  }
}

/** `urn:uuid:<uuid>` (lowercase) for a bare UUID or a `urn:uuid:` id in any case; other ids unchanged. */
export function normalizeCredentialId(id: string): string {
  const m = /^(?:urn:uuid:)?([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/i.exec(id);
  return m ? `urn:uuid:${m[1]!.toLowerCase()}` : id;
}

/**
 * Verification of a verifiable credential (contract §2.10, §4.11; design §8.16), for
 * `POST /verify/credential`. Five independent checks, each reported:
 * - `signature`: the Ed25519Signature2020 proof verifies with @digitalbazaar/vc through the
 *   offline document loader (VC data model rules, the key of the proof's verification method,
 *   the method in its controller's `assertionMethod`, the controller equal to `issuer`). The
 *   validity dates are judged at the credential's own issuance time here, so an expired but
 *   intact credential keeps `signature: true` and fails `expiration` alone. Unknown remote
 *   contexts are never fetched: such a credential fails this check.
 * - `issuer`: `issuer` is a `did:hub` DID that resolves (a registered hub identity, or the
 *   platform issuer) and whose document holds the proof's verification method, listed under
 *   `assertionMethod`.
 * - `expiration`: now (±5 minutes of clock skew, as vc allows) lies inside the validity period:
 *   not after `expirationDate` / `validUntil`, not before `issuanceDate` / `validFrom`; absent
 *   dates do not limit; unparseable dates fail.
 * - `revocation`: the credential `id` is not revoked in the registry of issued credentials; an
 *   id the service never issued has nothing to revoke and passes.
 * - `subject`: every `credentialSubject.id` is a well-formed DID (DID Core §3.1) and, when it is
 *   `did:hub`, registered.
 * `valid` is true when every check passes.
 */
import type { Db } from '../../db/client.js';
import { crossTenant } from '../../db/tenant.js';
import { parseHubDid } from './document-loader.js';
import { verifyCredentialProof, type DocumentLoader, type JsonObject } from './ld.js';
import { getIssuedCredential } from './repo.js';
import { CREDENTIAL_CHECKS, type CredentialCheckName, type CredentialVerification } from '@parley/protocol';

export { CREDENTIAL_CHECKS, type CredentialVerification } from '@parley/protocol';
export type CredentialCheck = CredentialCheckName;

/** vc's allowance for clock skew when it compares dates (seconds → ms). */
const CLOCK_SKEW_MS = 300_000;
/** DID syntax (DID Core §3.1): `did:<method>:<method-specific-id>`, no path, query or fragment. */
const DID_RE = /^did:[a-z0-9]+:(?:(?:[A-Za-z0-9._-]|%[0-9A-Fa-f]{2})*:)*(?:[A-Za-z0-9._-]|%[0-9A-Fa-f]{2})+$/;

const asArray = (v: unknown): unknown[] => (v === undefined || v === null ? [] : Array.isArray(v) ? v : [v]);
const idOf = (v: unknown): string | undefined => (typeof v === 'string' ? v : v && typeof v === 'object' && typeof (v as JsonObject).id === 'string' ? ((v as JsonObject).id as string) : undefined);
const objects = (v: unknown): JsonObject[] => asArray(v).filter((x): x is JsonObject => !!x && typeof x === 'object' && !Array.isArray(x));

/** A date property as epoch ms: undefined when absent, NaN when not a parseable string. */
function dateOf(credential: JsonObject, prop: string): number | undefined {
  const v = credential[prop];
  if (v === undefined) return undefined;
  return typeof v === 'string' ? Date.parse(v) : NaN;
}

export interface CredentialVerifierOptions {
  db: Db;
  /** A fresh offline document loader (document-loader.ts), one per verification. */
  loader: () => DocumentLoader;
  /** Clock (tests); default `Date.now`. */
  now?: () => number;
}

export class CredentialVerifier {
  constructor(private readonly opts: CredentialVerifierOptions) {}

  /** Run every check on `credential` (any JSON object); never throws for a malformed credential. */
  async verify(credential: JsonObject): Promise<CredentialVerification> {
    const loader = this.opts.loader();
    const [signature, issuer, revocation, subject] = await Promise.all([
      this.signature(credential, loader),
      this.issuer(credential, loader),
      this.revocation(credential),
      this.subject(credential, loader),
    ]);
    const results: Record<CredentialCheck, boolean> = { signature, issuer, expiration: this.expiration(credential), revocation, subject };
    const checks = CREDENTIAL_CHECKS.map((check) => ({ check, passed: results[check] }));
    const types = asArray(credential.type).filter((t): t is string => typeof t === 'string');
    return {
      valid: checks.every((c) => c.passed),
      checks,
      subject: idOf(objects(credential.credentialSubject)[0]) ?? null,
      credential_type: types.find((t) => t !== 'VerifiableCredential') ?? types[0] ?? null,
    };
  }

  private async signature(credential: JsonObject, loader: DocumentLoader): Promise<boolean> {
    // Judge validity dates at the credential's own start (else any instant in its period), so that expiry is reported by `expiration` alone.
    const at = ['issuanceDate', 'validFrom', 'expirationDate', 'validUntil'].map((p) => dateOf(credential, p)).find((t) => t !== undefined && Number.isFinite(t));
    try {
      return (await verifyCredentialProof(credential, loader, at === undefined ? undefined : new Date(at))).verified;
    } catch {
      return false;
    }
  }

  private async issuer(credential: JsonObject, loader: DocumentLoader): Promise<boolean> {
    const issuer = idOf(credential.issuer);
    const hub = issuer === undefined ? null : parseHubDid(issuer);
    const methods = objects(credential.proof).map((p) => idOf(p.verificationMethod));
    if (!hub || hub.fragment !== undefined || methods.length === 0) return false;
    let doc: JsonObject;
    try {
      doc = (await loader(hub.did)).document as JsonObject;
    } catch {
      return false;
    }
    const held = new Set(objects(doc.verificationMethod).filter((m) => m.controller === hub.did).map((m) => m.id));
    const asserting = new Set(asArray(doc.assertionMethod).map(idOf));
    return methods.every((m) => m !== undefined && held.has(m) && asserting.has(m));
  }

  private expiration(credential: JsonObject): boolean {
    const now = (this.opts.now ?? Date.now)();
    const ends = ['expirationDate', 'validUntil'].map((p) => dateOf(credential, p));
    const starts = ['issuanceDate', 'validFrom'].map((p) => dateOf(credential, p));
    if ([...ends, ...starts].some((t) => t !== undefined && !Number.isFinite(t))) return false;
    return ends.every((t) => t === undefined || now <= t! + CLOCK_SKEW_MS) && starts.every((t) => t === undefined || t! <= now + CLOCK_SKEW_MS);
  }

  private async revocation(credential: JsonObject): Promise<boolean> {
    const id = credential.id;
    if (id === undefined) return true;
    if (typeof id !== 'string') return false;
    if (id.includes('\u0000')) return true; // PostgreSQL text cannot hold NUL: no registry entry can have this id
    const row = await crossTenant(this.opts.db, 'the revocation registry is public: anyone may check whether a credential the service issued (to any tenant) is revoked (design §8.16)', (tx) =>
      getIssuedCredential(tx, id),
    );
    return !row?.revokedAt;
  }

  private async subject(credential: JsonObject, loader: DocumentLoader): Promise<boolean> {
    const subjects = objects(credential.credentialSubject);
    if (subjects.length === 0 || subjects.length !== asArray(credential.credentialSubject).length) return false;
    for (const s of subjects) {
      const id = s.id;
      if (typeof id !== 'string' || !DID_RE.test(id)) return false;
      if (id.startsWith('did:hub:')) {
        const hub = parseHubDid(id);
        if (!hub) return false;
        try {
          await loader(hub.did);
        } catch {
          return false;
        }
      }
    }
    return true;
  }
}

// eslint-disable-next-line @typescript-eslint/triple-slash-reference -- ambient types of untyped libraries, also for programs (tests) that include no src/*.d.ts
/// <reference path="./vendor.d.ts" />
/**
 * Linked Data proof primitives (design §8.16): the one place that calls @digitalbazaar/vc,
 * @digitalbazaar/ed25519-signature-2020 and jsonld-signatures. Signing and verification always
 * go through a caller-supplied document loader (document-loader.ts: offline, nothing remote).
 */
import * as vc from '@digitalbazaar/vc';
import { Ed25519Signature2020 } from '@digitalbazaar/ed25519-signature-2020';
import { Ed25519VerificationKey2020 } from '@digitalbazaar/ed25519-verification-key-2020';
import jsigs from 'jsonld-signatures';
import type { Ed25519Multibase } from '../../keys/index.js';

/** A JSON object (credential, DID document, context). */
export type JsonObject = Record<string, unknown>;

/** A JSON-LD document loader: resolves a URL or DID (URL) to its document, or rejects. */
export type DocumentLoader = (url: string) => Promise<{ contextUrl: string | null; documentUrl: string; document: unknown }>;

export type { Ed25519Multibase };

/** A signing key: the key pair plus its verification method id (`<did>#<key-id>`) and controller DID. */
export interface SigningKey extends Ed25519Multibase {
  id: string;
  controller: string;
}

/** Outcome of a proof verification; `error` is the library's first error message, for logs and tests. */
export interface ProofResult {
  verified: boolean;
  error?: string;
}

/**
 * Sign `credential` (not modified) with an `Ed25519Signature2020` proof (proof purpose
 * `assertionMethod`) through `vc.issue`. The suite context
 * `https://w3id.org/security/suites/ed25519-2020/v1` is appended to `@context` when missing.
 * @throws when the credential breaks the VC data model (vc's own checks) or a context cannot be loaded.
 */
export async function signCredential(credential: JsonObject, key: SigningKey, documentLoader: DocumentLoader): Promise<JsonObject> {
  const keyPair = await Ed25519VerificationKey2020.from({ ...key, type: 'Ed25519VerificationKey2020' });
  return vc.issue({ credential: structuredClone(credential), suite: new Ed25519Signature2020({ key: keyPair }), documentLoader });
}

/**
 * Verify a credential's `Ed25519Signature2020` proof with `vc.verifyCredential`: the VC data
 * model checks, the signature against the verification method the loader resolves, and the
 * issuance purpose (the method is in its controller's `assertionMethod` and the controller is the
 * credential `issuer`). `now` is the instant the validity dates are judged at: the caller passes a
 * time inside the credential's own validity period to keep expiry out of this check.
 */
export async function verifyCredentialProof(credential: JsonObject, documentLoader: DocumentLoader, now?: Date): Promise<ProofResult> {
  const r = await vc.verifyCredential({ credential, suite: new Ed25519Signature2020(), documentLoader, ...(now ? { now } : {}) });
  return r.verified ? { verified: true } : { verified: false, error: firstError(r) };
}

/**
 * Verify any JSON-LD document's `Ed25519Signature2020` proof with purpose `assertionMethod`
 * (jsonld-signatures' AssertionProofPurpose: the verification method is in its controller's
 * `assertionMethod`), with no credential-specific rules. Used for published test vectors whose
 * issuer is not the key's controller.
 */
export async function verifyAssertionProof(document: JsonObject, documentLoader: DocumentLoader): Promise<ProofResult> {
  const r = await jsigs.verify(document, { suite: new Ed25519Signature2020(), purpose: new jsigs.purposes.AssertionProofPurpose(), documentLoader });
  return r.verified ? { verified: true } : { verified: false, error: firstError(r) };
}

/** The first error message in a jsonld-signatures / vc result (errors nest in `errors` and `results`). */
function firstError(r: { error?: unknown; results?: unknown[] }): string {
  const pick = (e: unknown): string | undefined => {
    if (!e || typeof e !== 'object') return undefined;
    const x = e as { message?: unknown; errors?: unknown[]; error?: unknown };
    if (Array.isArray(x.errors) && x.errors.length > 0) return pick(x.errors[0]);
    if (x.error) return pick(x.error);
    return typeof x.message === 'string' ? x.message : undefined;
  };
  return pick(r.error) ?? pick(r.results?.[0]) ?? 'verification failed';
}

/**
 * `did:hub` DID documents and resolution results (contract §2.8, §4.10; design §8.15), as pure
 * functions: no database, no clock. The credentials module builds its own issuer document with
 * {@link buildDidDocument} and verifies `did:hub` proofs against documents from here.
 *
 * - Keys: `Ed25519VerificationKey2020` with `publicKeyMultibase` = `z` + base58btc(0xed 0x01 ‖
 *   32-byte key) (multicodec `ed25519-pub`, W3C Ed25519 Signature 2020).
 * - Documents follow W3C DID Core: `@context` [DID v1, Ed25519-2020 suite], `id`,
 *   `verificationMethod`, `authentication`, `assertionMethod`, `service` (the WebSocket endpoint).
 * - Resolution results follow W3C DID Resolution: `didDocument`, `didResolutionMetadata`,
 *   `didDocumentMetadata`.
 */
import { A2A_AGENT_CARD_SERVICE_FRAGMENT, A2A_AGENT_CARD_SERVICE_TYPE, ED25519_2020 } from '@parley/protocol';
import { publicKeyMultibase } from '../../keys/index.js';
import { hubDid, normalizeHubAddress } from '../../lib/hub-address.js';

/** `@context` of every DID document, in this order (design §8.15). */
export const DID_CONTEXT = ['https://www.w3.org/ns/did/v1', 'https://w3id.org/security/suites/ed25519-2020/v1'] as const;
/** `@context` of a DID resolution result. */
export const DID_RESOLUTION_CONTEXT = 'https://w3id.org/did-resolution/v1';
/** The only verification method type the service issues and accepts. */
export { ED25519_2020 } from '@parley/protocol';
/** `type` of the messaging service entry (`<did>#messaging`). */
export const MESSAGING_SERVICE_TYPE = 'ParleyMessaging';
/** Fragment of the registration key (the owner key) in the DID document. */
export const OWNER_KEY_ID = 'owner-key';
/** Content type named by a successful resolution (`didResolutionMetadata.contentType`). */
export const DID_DOCUMENT_CONTENT_TYPE = 'application/did+ld+json';


/** A verification method of a DID document (DID Core §5.2). */
export interface VerificationMethod {
  /** `<did>#owner-key` or `<did>#key-<n>`. */
  id: string;
  type: string;
  /** The DID that controls the key (the document's own DID). */
  controller: string;
  publicKeyMultibase: string;
}

/** A service entry of a DID document (DID Core §5.4). */
export interface DidService {
  id: string;
  type: string;
  /** The WebSocket URL (`ws://…` or `wss://…`), or the Agent Card URL. */
  serviceEndpoint: string;
}

/** A `did:hub` DID document (contract §2.8, DID Core §5). */
export interface DidDocument {
  '@context': string[];
  id: string;
  verificationMethod: VerificationMethod[];
  /** Ids of `verificationMethod` entries usable for authentication. */
  authentication: string[];
  /** Ids of `verificationMethod` entries usable for assertions (credential proofs). */
  assertionMethod: string[];
  service: DidService[];
}

/** An added (non-owner) verification method as stored: its fragment (`key-<n>`), type and key. */
export interface StoredMethod {
  keyId: string;
  type: string;
  publicKeyMultibase: string;
}

/** Input of {@link buildDidDocument}. */
export interface DidDocumentInput {
  /** Hub address (lowercase, design §8.13). */
  address: string;
  /** Registration `public_key`: raw 32-byte Ed25519 key, base64; null when none was registered. */
  ownerKey: string | null;
  /** Methods added by `PATCH /hub/{address}/did`, in the order they were added. */
  methods: readonly StoredMethod[];
  /** The messaging WebSocket URL (see {@link messagingEndpoint}). */
  wsUrl: string;
  /** URL of the identity's published A2A Agent Card; the document lists it as an `A2AAgentCard` service when given. */
  agentCardUrl?: string;
}

/** Error codes of `didResolutionMetadata.error` (W3C DID Resolution). */
export type DidResolutionError = 'notFound' | 'invalidDid' | 'methodNotSupported';

/** A DID resolution result (W3C DID Resolution §4, contract §4.10). */
export interface DidResolutionResult {
  '@context': string;
  didDocument: object | null;
  didResolutionMetadata: { contentType: string } | { error: DidResolutionError };
  /** Timestamps are XML datetimes in UTC without fractional seconds (DID Core §7.3.2). */
  didDocumentMetadata: { created?: string; updated?: string; deactivated?: boolean };
}

/** Document metadata given to {@link resolutionResult}. */
export interface DocumentMetadata {
  created?: Date;
  updated?: Date;
  deactivated?: boolean;
}

/** `did:hub:<address>` (contract §2.8). The address is used as given (callers pass the stored, lowercase form). */
export const didOf = (address: string): string => hubDid(address);

/**
 * The hub address named by a DID string, or the resolution error for it: `methodNotSupported`
 * for a well-formed DID of another method, `invalidDid` for anything else (including a
 * `did:hub:` whose address breaks design §8.13). The address comes back lowercase.
 */
export function parseDid(did: string): { address: string } | { error: 'invalidDid' | 'methodNotSupported' } {
  // DID Core §3.1 syntax: did:<method-name>:<method-specific-id>.
  const m = /^did:([a-z0-9]+):([A-Za-z0-9._%-]+(?::[A-Za-z0-9._%-]*)*)$/.exec(did);
  if (!m) return { error: 'invalidDid' };
  if (m[1] !== 'hub') return { error: 'methodNotSupported' };
  const address = normalizeHubAddress(m[2]!);
  return address ? { address } : { error: 'invalidDid' };
}

/**
 * The messaging WebSocket URL for the `service` entry: `PUBLIC_URL` with http→ws, https→wss and
 * `/api/v1/ws` appended (a path in `PUBLIC_URL` is kept, trailing slashes dropped).
 */
export function messagingEndpoint(publicUrl: string): string {
  return publicUrl.replace(/\/+$/, '').replace(/^http(s?):\/\//i, (_m, s: string) => `ws${s.toLowerCase()}://`) + '/api/v1/ws';
}

/**
 * A W3C DID Core document for a hub identity (contract §2.8, design §8.15): the owner key as
 * `<did>#owner-key` (when registered), then the added methods as `<did>#key-<n>`; every method is
 * controlled by the DID itself and listed in both `authentication` and `assertionMethod`; one
 * service `<did>#messaging` pointing at the WebSocket endpoint, and `<did>#a2a-agent-card`
 * (type `A2AAgentCard`) pointing at the published Agent Card when there is one.
 * @throws RangeError when `ownerKey` is not the base64 of 32 bytes.
 */
export function buildDidDocument(input: DidDocumentInput): DidDocument {
  const did = didOf(input.address);
  const methods: VerificationMethod[] = [];
  if (input.ownerKey !== null) {
    methods.push({ id: `${did}#${OWNER_KEY_ID}`, type: ED25519_2020, controller: did, publicKeyMultibase: publicKeyMultibase(Buffer.from(input.ownerKey, 'base64')) });
  }
  for (const m of input.methods) methods.push({ id: `${did}#${m.keyId}`, type: m.type, controller: did, publicKeyMultibase: m.publicKeyMultibase });
  const ids = methods.map((m) => m.id);
  return {
    '@context': [...DID_CONTEXT],
    id: did,
    verificationMethod: methods,
    authentication: ids,
    assertionMethod: [...ids],
    service: [
      { id: `${did}#messaging`, type: MESSAGING_SERVICE_TYPE, serviceEndpoint: input.wsUrl },
      ...(input.agentCardUrl ? [{ id: `${did}#${A2A_AGENT_CARD_SERVICE_FRAGMENT}`, type: A2A_AGENT_CARD_SERVICE_TYPE, serviceEndpoint: input.agentCardUrl }] : []),
    ],
  };
}

/** An XML datetime in UTC without fractional seconds, as DID Core §7.3.2 requires. */
export const didTimestamp = (d: Date): string => d.toISOString().replace(/\.\d{3}Z$/, 'Z');

/**
 * A DID resolution result. With a document: `didResolutionMetadata.contentType` is
 * `application/did+ld+json` and `didDocumentMetadata` carries the given `created`/`updated`
 * (and `deactivated` when given). Without one: `didDocument: null`,
 * `didResolutionMetadata.error` (default `notFound`) and empty document metadata.
 */
export function resolutionResult(doc: object | null, meta: DocumentMetadata = {}, error: DidResolutionError = 'notFound'): DidResolutionResult {
  if (!doc) return { '@context': DID_RESOLUTION_CONTEXT, didDocument: null, didResolutionMetadata: { error }, didDocumentMetadata: {} };
  return {
    '@context': DID_RESOLUTION_CONTEXT,
    didDocument: doc,
    didResolutionMetadata: { contentType: DID_DOCUMENT_CONTENT_TYPE },
    didDocumentMetadata: {
      ...(meta.created ? { created: didTimestamp(meta.created) } : {}),
      ...(meta.updated ? { updated: didTimestamp(meta.updated) } : {}),
      ...(meta.deactivated !== undefined ? { deactivated: meta.deactivated } : {}),
    },
  };
}

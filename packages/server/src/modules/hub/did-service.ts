/**
 * DID documents of hub identities, their resolution and their updates (contract §2.8, §4.10;
 * design §8.15). Documents are public: reads cross tenants (addresses are unique platform-wide);
 * the update (`PATCH /hub/{address}/did`) runs in the owner's tenant and needs a signature by the
 * identity's owner key over a replay-safe payload.
 *
 * Update payload (design §8.15): the request body minus `signature`, canonicalized with JCS
 * (RFC 8785), UTF-8; `signature` is the base64 Ed25519 signature of those bytes by the owner key
 * (the registration `public_key`). `timestamp` must lie within 5 minutes of the server clock
 * (else 400) and be strictly newer than the last accepted update's (else 409), so a captured
 * request cannot be replayed.
 */
import { randomUUID } from 'node:crypto';
import canonicalize from 'canonicalize';
import type { Db, Tx } from '../../db/client.js';
import { hubVerificationMethods } from '../../db/schema/index.js';
import { crossTenant, withTenant } from '../../db/tenant.js';
import { verifyEd25519 } from '../../lib/crypto.js';
import { badRequest, conflict, forbidden, notFound } from '../../lib/errors.js';
import { buildDidDocument, ED25519_2020, messagingEndpoint, parseDid, resolutionResult, type DidDocument, type DidResolutionResult, type DocumentMetadata } from './did.js';
import { decodePublicKeyMultibase } from '../../keys/index.js';
import { isEd25519PublicKey } from '../../lib/public-keys.js';
import { appendAudit } from '../audit/index.js';
import { getByAddress, listVerificationMethods, updateHubIdentity, type HubIdentityRow } from './repo.js';
import { commitDidKeys } from './did-keys.js';
import type { KeyDirectory } from '../key-directory/index.js';
import { normalizeHubAddress, ownIdentityAt } from './service.js';

/** How far a DID update `timestamp` may be from the server clock (design §8.15). */
export const DID_UPDATE_WINDOW_MS = 5 * 60_000;

/** Body of `PATCH /hub/{address}/did` (design §8.15). Extra fields are allowed and are signed too. */
export interface DidUpdateRequest {
  add_verification_method: { type: string; publicKeyMultibase: string; [k: string]: unknown };
  /** ISO 8601; within 5 minutes of now and newer than the last accepted update. */
  timestamp: string;
  /** Base64 Ed25519 signature by the owner key over JCS of this body without `signature`. */
  signature: string;
  [k: string]: unknown;
}

/** A resolution answer with the HTTP status it is served with (200, 400 invalid DID, 404 unknown). */
export interface Resolution {
  status: 200 | 400 | 404;
  body: DidResolutionResult;
}

export interface HubDidServiceOptions {
  db: Db;
  /** `PUBLIC_URL`: the messaging service endpoint is built from it. */
  publicUrl: string;
  /**
   * The platform's own DID document for an address (the service's credential-issuing DID,
   * `did:hub:<platform address>`), or null when `address` is not the platform's. Consulted first,
   * so a registered identity can never shadow the issuer DID.
   */
  platformDocument?: (address: string) => object | null;
  /** The key directory an added verification method is committed to (design §8.39); updates need it. */
  directory?: KeyDirectory;
}

interface Found {
  document: object;
  meta: DocumentMetadata;
}

export class HubDidService {
  private readonly wsUrl: string;
  private readonly apiUrl: string;

  constructor(private readonly opts: HubDidServiceOptions) {
    this.wsUrl = messagingEndpoint(opts.publicUrl);
    this.apiUrl = `${opts.publicUrl.replace(/\/+$/, '')}/api/v1`;
  }

  /** The DID document of a stored identity, read in the caller's transaction (its added methods included). */
  async documentFor(tx: Tx, identity: HubIdentityRow): Promise<DidDocument> {
    return this.build(identity, await listVerificationMethods(tx, identity.id));
  }

  /**
   * The DID document of `address` (any case): the platform's own document, a registered
   * identity's, or null (unknown or malformed address). Used by the credentials document loader.
   */
  async resolve(address: string): Promise<object | null> {
    return (await this.find(address))?.document ?? null;
  }

  /** The DID document of a registered address. @throws 404 unknown or malformed address. */
  async document(address: string): Promise<object> {
    const found = await this.find(address);
    if (!found) throw notFound('hub identity');
    return found.document;
  }

  /** `GET /hub/resolve/{address}`: a resolution result; `invalidDid` (400) for a malformed address, `notFound` (404). */
  async resolveAddress(address: string): Promise<Resolution> {
    if (!normalizeHubAddress(address)) return { status: 400, body: resolutionResult(null, {}, 'invalidDid') };
    return this.answer(await this.find(address));
  }

  /**
   * `GET /1.0/identifiers/{did}` (DIF Universal Resolver driver): a resolution result; 400 with
   * `invalidDid` or `methodNotSupported` (only `did:hub`), 404 `notFound`.
   */
  async resolveDid(did: string): Promise<Resolution> {
    const parsed = parseDid(did);
    if ('error' in parsed) return { status: 400, body: resolutionResult(null, {}, parsed.error) };
    return this.answer(await this.find(parsed.address));
  }

  /**
   * Add a verification method to the identity's DID document (design §8.15), in one transaction
   * that locks the identity row (concurrent updates serialize). The new method gets the id
   * `key-<n>`, n = number of methods in the document (owner key included) + 1. Records
   * `hub.did_updated` (the new key id and its multibase public key) by `actor` in the same transaction.
   * @returns the updated DID document.
   * @throws 404 unknown address in this tenant; 409 no owner key registered; 403 signature does
   *   not verify with the owner key; 400 timestamp more than 5 minutes from now, or
   *   `publicKeyMultibase` not z-base58btc of 0xed01 + a valid (not small-order) Ed25519 key,
   *   or another method type;
   *   409 timestamp not newer than the last accepted update (replay); 409 key already in the document.
   */
  async addVerificationMethod(tenantId: string, address: string, body: DidUpdateRequest, actor = 'owner', now = new Date()): Promise<DidDocument> {
    return withTenant(this.opts.db, tenantId, async (tx) => {
      const identity = await ownIdentityAt(tx, address, true);
      if (!identity.publicKey) throw conflict('this hub identity has no owner key (registration public_key), so its DID document cannot be updated');
      if (!verifyUpdateSignature(identity.publicKey, body)) throw forbidden('signature does not verify with the owner key over JCS of the body without "signature"');
      const at = Date.parse(body.timestamp);
      if (!Number.isFinite(at) || Math.abs(now.getTime() - at) > DID_UPDATE_WINDOW_MS) throw badRequest('timestamp must be within 5 minutes of the server time');
      if (identity.didUpdatedAt && at <= identity.didUpdatedAt.getTime()) throw conflict('timestamp is not newer than the last accepted DID update (replay)');
      const method = body.add_verification_method;
      if (method.type !== ED25519_2020) throw badRequest(`add_verification_method.type must be ${ED25519_2020}`);
      const raw = decodePublicKeyMultibase(method.publicKeyMultibase);
      if (!raw || !isEd25519PublicKey(raw)) throw badRequest('publicKeyMultibase must be "z" + base58btc of 0xed 0x01 followed by a valid 32-byte Ed25519 public key (a curve point, not of small order)');

      const methods = await listVerificationMethods(tx, identity.id);
      const current = this.build(identity, methods);
      if (current.verificationMethod.some((m) => m.publicKeyMultibase === method.publicKeyMultibase)) throw conflict('this key is already a verification method of the DID document');
      const [added] = await tx
        .insert(hubVerificationMethods)
        .values({ id: randomUUID(), tenantId, identityId: identity.id, keyId: `key-${current.verificationMethod.length + 1}`, type: ED25519_2020, publicKeyMultibase: method.publicKeyMultibase })
        .returning();
      await updateHubIdentity(tx, identity.id, { didUpdatedAt: new Date(at), updatedAt: now });
      if (!this.opts.directory) throw new Error('HubDidService: DID updates need the key directory');
      await commitDidKeys(tx, this.opts.directory, identity.id);
      await appendAudit(tx, tenantId, {
        type: 'hub.did_updated',
        actor,
        subject: identity.id,
        data: { hub_address: identity.hubAddress, key_id: added!.keyId, key_type: added!.type, public_key_multibase: added!.publicKeyMultibase },
      });
      return this.build(identity, [...methods, added!]);
    });
  }

  private answer(found: Found | null): Resolution {
    return found ? { status: 200, body: resolutionResult(found.document, found.meta) } : { status: 404, body: resolutionResult(null) };
  }

  private build(identity: HubIdentityRow, methods: readonly (typeof hubVerificationMethods.$inferSelect)[]): DidDocument {
    const agentCardUrl = identity.agentCard ? `${this.apiUrl}/hub/${identity.hubAddress}/agent-card` : undefined;
    return buildDidDocument({ address: identity.hubAddress, ownerKey: identity.publicKey, methods, wsUrl: this.wsUrl, ...(agentCardUrl ? { agentCardUrl } : {}) });
  }

  /** Platform document first, then the registered identity (read across tenants). */
  private async find(address: string): Promise<Found | null> {
    const hubAddress = normalizeHubAddress(address);
    if (!hubAddress) return null;
    const platform = this.opts.platformDocument?.(hubAddress);
    if (platform) return { document: platform, meta: {} };
    return crossTenant(this.opts.db, 'DID documents are public and hub addresses unique platform-wide (contract §2.8, §4.10)', async (tx) => {
      const identity = await getByAddress(tx, hubAddress);
      if (!identity) return null;
      const methods = await listVerificationMethods(tx, identity.id);
      const updated = methods.reduce((latest, m) => (m.createdAt > latest ? m.createdAt : latest), identity.createdAt);
      return { document: this.build(identity, methods), meta: { created: identity.createdAt, updated } };
    });
  }
}

/** Ed25519 verification of a DID update by the owner key (base64) over UTF-8 JCS of the body without `signature`. */
function verifyUpdateSignature(ownerKeyB64: string, body: DidUpdateRequest): boolean {
  const { signature, ...signed } = body;
  const payload = canonicalize(signed);
  if (payload === undefined) return false;
  const key = Buffer.from(ownerKeyB64, 'base64');
  const sig = Buffer.from(signature, 'base64');
  return key.length === 32 && sig.length === 64 && verifyEd25519(key.toString('hex'), Buffer.from(payload, 'utf8'), sig.toString('hex'));
}

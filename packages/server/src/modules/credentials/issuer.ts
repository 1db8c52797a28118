/**
 * The platform issuer (design §8.16): the service's own Ed25519 key, under the DID
 * `did:hub:<PLATFORM_HUB_ADDRESS>` (default `did:hub:parley`), signs the TrustTierCredentials it
 * issues. The key lives in the `platform_keys` platform table (purpose `vc-issuer`; the
 * application role cannot read it; the private half sealed with the secrets key,
 * keys/sealed-keys.ts), created by the first instance that starts and loaded by every
 * other, so all instances sign with the same key. The address is reserved: no hub identity can
 * register it (HubService's reserved addresses), and the DID resolves to the document built here
 * (HubDidService's `platformDocument` hook).
 */
import type { Db } from '../../db/client.js';
import { loadPlatformKey, type Ed25519Multibase } from '../../keys/index.js';
import type { SecretBox } from '../../lib/secret-box.js';
import { buildDidDocument, type DidDocument, ED25519_2020, hubDid, messagingEndpoint } from '../hub/index.js';
import type { SigningKey } from './ld.js';

/** `platform_keys.purpose` of the credential-issuing key. */
export const ISSUER_KEY_PURPOSE = 'vc-issuer';
/** Fragment of the issuing key in the platform DID document (`did:hub:<address>#key-1`). */
export const ISSUER_KEY_ID = 'key-1';

export class PlatformIssuer {
  /** `did:hub:<platform address>`. */
  readonly did: string;
  /** The proof's `verificationMethod`: `<did>#key-1`. */
  readonly verificationMethod: string;
  private key: Ed25519Multibase | undefined;
  private document: DidDocument | undefined;

  /**
   * @param box the secrets keyring that seals the key at rest (`SECRETS_KEY`).
   * @param address the platform hub address (`config.credentials.platformHubAddress`, lowercase).
   * @param publicUrl `PUBLIC_URL`: the document's messaging service endpoint, as for every `did:hub` document.
   */
  constructor(
    private readonly db: Db,
    private readonly box: SecretBox,
    readonly address: string,
    private readonly publicUrl: string,
  ) {
    this.did = hubDid(address);
    this.verificationMethod = `${this.did}#${ISSUER_KEY_ID}`;
  }

  /** Load the issuing key, creating it when the database has none ({@link loadPlatformKey}). */
  async init(): Promise<void> {
    const row = await loadPlatformKey(this.db, this.box, ISSUER_KEY_PURPOSE);
    this.key = row;
    this.document = buildDidDocument({
      address: this.address,
      ownerKey: null,
      methods: [{ keyId: ISSUER_KEY_ID, type: ED25519_2020, publicKeyMultibase: row.publicKeyMultibase }],
      wsUrl: messagingEndpoint(this.publicUrl),
    });
  }

  /**
   * The platform DID document (W3C DID Core, the same builder as every `did:hub` document: the
   * issuing key as `#key-1` in `verificationMethod`, `authentication` and `assertionMethod`) when
   * `address` is the platform address, else null. The hook HubDidService consults first.
   */
  platformDocument(address: string): DidDocument | null {
    return address === this.address && this.document ? this.document : null;
  }

  /** The key that signs credentials. @throws before {@link init}. */
  signingKey(): SigningKey {
    if (!this.key) throw new Error('PlatformIssuer.init() has not run');
    return { id: this.verificationMethod, controller: this.did, ...this.key };
  }
}

/**
 * Secrets at rest in the browser (DESIGN §8.30): the owner device's keys and its end-to-end
 * session state, and the decrypted chat log, are kept in IndexedDB encrypted with AES-256-GCM
 * under a per-owner WebCrypto key generated non-extractable (`extractable: false`): script on the
 * page can use it but never read it, and a copy of the database files is ciphertext. The record
 * id is bound as additional authenticated data, so records cannot be swapped.
 *
 * Why not non-extractable Ed25519/X25519 keys: X3DH (Signal) uses the identity key converted to
 * X25519 and the signed prekey as the first Double Ratchet key, which needs the secret scalars;
 * WebCrypto keys cannot be converted or copied. The SDK's keys are used instead, sealed here
 * (the fallback DESIGN §8.30 names). Recorded in docs/decisions.md.
 */
import type { SessionStore } from '@parley/sdk';
import { openDB, type IDBPDatabase } from 'idb';

const DB_NAME = 'parley-dashboard';
const DB_VERSION = 1;

interface SealedRecord {
  iv: Uint8Array<ArrayBuffer>;
  ct: ArrayBuffer;
}

let dbPromise: Promise<IDBPDatabase> | undefined;

function db(): Promise<IDBPDatabase> {
  dbPromise ??= openDB(DB_NAME, DB_VERSION, {
    upgrade(d) {
      d.createObjectStore('wrapping-keys');
      d.createObjectStore('sealed');
    },
  });
  return dbPromise;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * A {@link SessionStore} whose values are sealed with AES-GCM under the namespace's
 * non-extractable key. Ids are namespaced (`<namespace>/<id>`), so owners sharing a browser do
 * not see each other's records (nor can they decrypt them: one key per namespace).
 */
export class SealedStore implements SessionStore {
  private constructor(
    private readonly namespace: string,
    private readonly key: CryptoKey,
  ) {}

  /**
   * Open (creating on first use) the store of `namespace` (an owner's subject).
   * @throws DOMException when IndexedDB or WebCrypto is unavailable (private windows of some browsers).
   */
  static async open(namespace: string): Promise<SealedStore> {
    const d = await db();
    let key = (await d.get('wrapping-keys', namespace)) as CryptoKey | undefined;
    if (!key) {
      key = await crypto.subtle.generateKey({ name: 'AES-GCM', length: 256 }, false, ['encrypt', 'decrypt']);
      await d.put('wrapping-keys', key, namespace);
    }
    return new SealedStore(namespace, key);
  }

  private id(id: string): string {
    return `${this.namespace}/${id}`;
  }

  /** The plaintext saved under `id`, or undefined. @throws DOMException `OperationError` when a record was tampered with. */
  async load(id: string): Promise<string | undefined> {
    const rec = (await (await db()).get('sealed', this.id(id))) as SealedRecord | undefined;
    if (!rec) return undefined;
    const pt = await crypto.subtle.decrypt({ name: 'AES-GCM', iv: rec.iv, additionalData: encoder.encode(this.id(id)) }, this.key, rec.ct);
    return decoder.decode(pt);
  }

  /** Seal and save `state` under `id` (a fresh 96-bit IV per write). */
  async save(id: string, state: string): Promise<void> {
    if (typeof state !== 'string') throw new TypeError('state must be a string');
    const iv = crypto.getRandomValues(new Uint8Array(12));
    const ct = await crypto.subtle.encrypt({ name: 'AES-GCM', iv, additionalData: encoder.encode(this.id(id)) }, this.key, encoder.encode(state));
    await (await db()).put('sealed', { iv, ct } satisfies SealedRecord, this.id(id));
  }

  async delete(id: string): Promise<void> {
    await (await db()).delete('sealed', this.id(id));
  }

  /** Forget everything of this namespace (sign-out with "forget this browser"). */
  async destroy(): Promise<void> {
    const d = await db();
    const tx = d.transaction(['sealed', 'wrapping-keys'], 'readwrite');
    const range = IDBKeyRange.bound(`${this.namespace}/`, `${this.namespace}/\uffff`);
    await tx.objectStore('sealed').delete(range);
    await tx.objectStore('wrapping-keys').delete(this.namespace);
    await tx.done;
  }
}

/**
 * Secrets at rest in the browser: the owner device's keys, its end-to-end session state and the
 * decrypted chat log are kept in IndexedDB, each record encrypted with AES-256-GCM under a
 * per-owner WebCrypto key generated non-extractable (`extractable: false`). The additional
 * authenticated data binds the record id and a per-record counter.
 *
 * What this protects, precisely (docs/architecture.md "Keys at rest"):
 * - The wrapping key is stored in the same IndexedDB database as the records, in the browser
 *   profile on disk. `extractable: false` is enforced by the WebCrypto API only: page script cannot
 *   export the raw key, but the browser serializes the key material into the profile's IndexedDB
 *   files like any other value. Anyone who can read the profile (a copy of the disk or of a backup,
 *   other software running as the same OS user) can recover the key and decrypt every record.
 *   At rest the records are as safe as the profile is (OS account, disk encryption).
 * - Script running in the page (an XSS) can use the key to decrypt while it runs, but cannot carry
 *   the key away to decrypt later records offline.
 * - Records are authenticated: a modified record, or one moved to another id, fails to open.
 * - Rollback of a single record is refused: every save gives the record the next counter, and the
 *   highest counter of each record is kept, sealed, in a `counters` store (and in memory while the
 *   page runs); an older sealed copy put back fails with {@link SealedRollbackError}. Someone
 *   with the whole profile can roll back records and counters together, which is not detected:
 *   nothing outside the profile remembers the counters.
 *
 * Why not non-extractable Ed25519/X25519 keys: X3DH (Signal) uses the identity key converted to
 * X25519 and the signed prekey as the first Double Ratchet key, which needs the secret scalars;
 * WebCrypto keys cannot be converted or copied. The SDK's keys are used instead, sealed here.
 * Recorded in docs/decisions.md.
 */
import type { SessionStore } from '@parley/sdk';
import { openDB, type IDBPDatabase } from 'idb';

const DB_NAME = 'parley-dashboard';
/** 1: wrapping keys and sealed records; 2: adds the sealed highest counters. */
const DB_VERSION = 2;

/** A sealed record: AES-GCM IV and ciphertext, and its counter (absent in records saved before version 2). */
interface SealedRecord {
  iv: Uint8Array<ArrayBuffer>;
  ct: ArrayBuffer;
  counter?: number;
}

/** The highest counter of a record, and whether it was deleted (sealed as JSON in `counters`). */
interface Highest {
  counter: number;
  deleted?: true;
}

let dbPromise: Promise<IDBPDatabase> | undefined;

function db(): Promise<IDBPDatabase> {
  dbPromise ??= openDB(DB_NAME, DB_VERSION, {
    upgrade(d, oldVersion) {
      if (oldVersion < 1) {
        d.createObjectStore('wrapping-keys');
        d.createObjectStore('sealed');
      }
      if (oldVersion < 2) d.createObjectStore('counters');
    },
  });
  return dbPromise;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** A sealed record is older than the highest counter this browser recorded for it (rollback), or plain where a sealed one was. */
export class SealedRollbackError extends Error {
  override readonly name = 'SealedRollbackError';
}

/**
 * A {@link SessionStore} whose values are sealed with AES-GCM under the namespace's
 * non-extractable key (see the file comment for what that does and does not protect). Ids are
 * namespaced (`<namespace>/<id>`), so owners sharing a browser do not see each other's records
 * (nor can they decrypt them: one key per namespace).
 */
export class SealedStore implements SessionStore {
  /** Highest counters seen by this page (a rollback while it runs is refused even if `counters` was rolled back too). */
  private readonly seen = new Map<string, number>();

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

  /**
   * The plaintext saved under `id`, or undefined (also for an older copy of a deleted record).
   * @throws SealedRollbackError for an older copy of the record; DOMException `OperationError`
   *   when a record was tampered with.
   */
  async load(id: string): Promise<string | undefined> {
    const full = this.id(id);
    const tx = (await db()).transaction(['sealed', 'counters'], 'readonly');
    const [rec, sealedHighest] = await Promise.all([tx.objectStore('sealed').get(full) as Promise<SealedRecord | undefined>, tx.objectStore('counters').get(full) as Promise<SealedRecord | undefined>]);
    await tx.done;
    const stored = sealedHighest ? await this.openHighest(full, sealedHighest) : undefined;
    const highest = Math.max(stored?.counter ?? 0, this.seen.get(full) ?? 0);
    if (!rec) return undefined;
    const counter = rec.counter ?? 0;
    if (stored?.deleted && counter <= stored.counter) return undefined;
    if (counter < highest || (rec.counter === undefined && sealedHighest)) {
      throw new SealedRollbackError(`the sealed record ${id} is older (counter ${counter}) than the one this browser last saved (counter ${highest}): refused`);
    }
    const pt = await crypto.subtle.decrypt({ name: 'AES-GCM', iv: rec.iv, additionalData: recordAad(full, rec.counter) }, this.key, rec.ct);
    this.seen.set(full, counter);
    return decoder.decode(pt);
  }

  /** Seal and save `state` under `id` as its next counter (a fresh 96-bit IV per write). */
  async save(id: string, state: string): Promise<void> {
    if (typeof state !== 'string') throw new TypeError('state must be a string');
    const full = this.id(id);
    const counter = Math.max(await this.storedHighest(full), this.seen.get(full) ?? 0) + 1;
    const record = await this.seal(encoder.encode(state), recordAad(full, counter));
    const highest = await this.seal(encoder.encode(JSON.stringify({ counter } satisfies Highest)), counterAad(full));
    const tx = (await db()).transaction(['sealed', 'counters'], 'readwrite');
    await Promise.all([tx.objectStore('sealed').put({ ...record, counter } satisfies SealedRecord, full), tx.objectStore('counters').put(highest, full), tx.done]);
    this.seen.set(full, counter);
  }

  /** Remove `id`; its counter stays (marked deleted), so an older copy put back is ignored. */
  async delete(id: string): Promise<void> {
    const full = this.id(id);
    const counter = Math.max(await this.storedHighest(full), this.seen.get(full) ?? 0);
    const highest = await this.seal(encoder.encode(JSON.stringify({ counter, deleted: true } satisfies Highest)), counterAad(full));
    const tx = (await db()).transaction(['sealed', 'counters'], 'readwrite');
    await Promise.all([tx.objectStore('sealed').delete(full), tx.objectStore('counters').put(highest, full), tx.done]);
  }

  /** Forget everything of this namespace (sign-out with "forget this browser"). */
  async destroy(): Promise<void> {
    const d = await db();
    const tx = d.transaction(['sealed', 'counters', 'wrapping-keys'], 'readwrite');
    const range = IDBKeyRange.bound(`${this.namespace}/`, `${this.namespace}/\uffff`);
    await tx.objectStore('sealed').delete(range);
    await tx.objectStore('counters').delete(range);
    await tx.objectStore('wrapping-keys').delete(this.namespace);
    await tx.done;
    this.seen.clear();
  }

  private async seal(plaintext: Uint8Array<ArrayBuffer>, additionalData: Uint8Array<ArrayBuffer>): Promise<{ iv: Uint8Array<ArrayBuffer>; ct: ArrayBuffer }> {
    const iv = crypto.getRandomValues(new Uint8Array(12));
    return { iv, ct: await crypto.subtle.encrypt({ name: 'AES-GCM', iv, additionalData }, this.key, plaintext) };
  }

  private async storedHighest(full: string): Promise<number> {
    const sealed = (await (await db()).get('counters', full)) as SealedRecord | undefined;
    return sealed ? (await this.openHighest(full, sealed)).counter : 0;
  }

  private async openHighest(full: string, sealed: SealedRecord): Promise<Highest> {
    const pt = await crypto.subtle.decrypt({ name: 'AES-GCM', iv: sealed.iv, additionalData: counterAad(full) }, this.key, sealed.ct);
    return JSON.parse(decoder.decode(pt)) as Highest;
  }
}

/** AES-GCM additional data of a record: its namespaced id and counter (records saved before counters: the id alone). */
function recordAad(full: string, counter: number | undefined): Uint8Array<ArrayBuffer> {
  return encoder.encode(counter === undefined ? full : `${full}\0${counter}`);
}

function counterAad(full: string): Uint8Array<ArrayBuffer> {
  return encoder.encode(`counter\0${full}`);
}

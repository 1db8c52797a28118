/**
 * When an instance reloads a cache of signing keys kept in the database (device-token keys,
 * SPT keys; docs/decisions.md "Key rotation", docs/operations.md "Key rotation"), so that a key
 * rotated on one instance is used and accepted by every instance:
 * - on use, once the cache is older than `refreshMs` ({@link fresh});
 * - for a token naming a `kid` that is not loaded, at most once per `unknownKidMs`, shared by every
 *   waiting caller ({@link reloadForUnknownKid}): a key created just after the last load is found
 *   within that time, and a flood of forged kids costs one query per interval.
 * A failed reload keeps the cached keys until the next interval.
 *
 * Inside a transaction on the embedded database's single connection (db/single-connection.ts) a
 * reload cannot run before the transaction ends: there both reloads start in the background, to run
 * once it has ended, and the caller goes on with the cached keys (on one process nothing else can
 * have rotated them: a rotation on this instance loads the new key at once).
 */
import { insideTransaction, outsideTransaction } from '../db/single-connection.js';

export class KeyReloader {
  private loadedAt = 0;
  private loading: Promise<void> | undefined;
  private unknownKid: Promise<void> | undefined;

  /**
   * @param loadKeys reads the keys and replaces the owner's cache (rejects on a database error).
   * @param refreshMs how long a load is used before the next (ms).
   * @param unknownKidMs least time between two reloads caused by unknown kids (ms).
   */
  constructor(
    private readonly loadKeys: () => Promise<void>,
    private readonly refreshMs: number,
    private readonly unknownKidMs = 1_000,
  ) {}

  /** Load now (start-up, after a rotation on this instance). @throws what `loadKeys` throws. */
  async load(): Promise<void> {
    await this.loadKeys();
    this.loadedAt = Date.now();
  }

  /** Load once, shared by concurrent callers; never rejects (a failure keeps the cache). */
  reload(): Promise<void> {
    this.loading ??= this.load()
      .catch(() => {
        this.loadedAt = Date.now();
      })
      .finally(() => {
        this.loading = undefined;
      });
    return this.loading;
  }

  /** Reload when the cache is older than `refreshMs`. */
  async fresh(): Promise<void> {
    if (Date.now() - this.loadedAt < this.refreshMs) return;
    if (insideTransaction()) void outsideTransaction(() => this.reload());
    else await this.reload();
  }

  /** The next reload allowed for an unknown kid (waits up to `unknownKidMs` since the last load). */
  reloadForUnknownKid(): Promise<void> {
    if (insideTransaction()) {
      void outsideTransaction(() => this.reloadForUnknownKid());
      return Promise.resolve();
    }
    this.unknownKid ??= (async () => {
      const wait = this.loadedAt + this.unknownKidMs - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      await this.reload();
    })().finally(() => {
      this.unknownKid = undefined;
    });
    return this.unknownKid;
  }
}

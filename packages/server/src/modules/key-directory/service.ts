/**
 * The key directory (design §8.39; structures in `@parley/protocol` key-directory/*): every key
 * binding the service serves for session set-up or peer verification is committed here, in the
 * transaction that stores it, before any request can be answered with it ({@link KeyDirectory.publish}).
 *
 * The table `key_directory_entries` is the source of truth. Each instance holds the directory in
 * memory (the log's complete subtrees and the prefix tree) and catches up with the entries other
 * transactions committed before it answers ({@link KeyDirectory.sync}: one indexed read of what is
 * new); applying an entry recomputes its prefix root and checks it against the stored one. An
 * append takes the directory's advisory lock and computes its entries on a copy of the prefix tree
 * (prefix-tree.ts is persistent) with what its transaction sees, so a rolled back transaction
 * leaves the shared state untouched.
 *
 * Checkpoints are C2SP signed notes `<host>/keys`, size, root (no timestamp: Ed25519 signatures are
 * deterministic, so a size's note is the same on every instance and witnesses cosign one text),
 * signed by the platform log key (keys/audit-log-keys.ts), with the witness cosignatures held for
 * that size appended.
 */
import { randomBytes } from 'node:crypto';
import { encodeKeyDirectoryEntry, keyDirectoryHashing, type KeyDirectoryEntries, type KeyDirectoryHead, type KeyLookup, type KeyLookups } from '@parley/protocol';
import type { Db, Tx } from '../../db/client.js';
import { crossTenantRead } from '../../db/tenant.js';
import { badRequest, notFound } from '../../lib/errors.js';
import type { AuditLogKeys } from '../../keys/index.js';
import { LogTree, sha256 } from './log-tree.js';
import { PrefixTree } from './prefix-tree.js';
import * as repo from './repo.js';
import type { DirectoryVrf } from './vrf-key.js';

const hashing = keyDirectoryHashing(sha256);
const b64 = (b: Uint8Array) => Buffer.from(b).toString('base64');
const REASON = 'key directory: a platform table without tenant_id, one log for every tenant';

/** One key binding to commit: its label and value bytes (`@parley/protocol` key-directory/labels.ts). */
export interface KeyBinding {
  label: string;
  value: Uint8Array;
}

export class KeyDirectory {
  private readonly log = new LogTree();
  private prefix = PrefixTree.EMPTY;
  /** The newest entry's bytes (the log's last leaf input). */
  private head: Uint8Array | undefined;
  /** Signed notes by `size:key id`, the newest few. */
  private readonly notes = new Map<string, string>();

  constructor(
    private readonly db: Db,
    private readonly vrf: DirectoryVrf,
    private readonly keys: AuditLogKeys,
  ) {}

  /** The VRF public key (32 bytes). */
  get vrfPublicKey(): Uint8Array {
    return this.vrf.publicKey;
  }

  /** Entries applied in memory. */
  get size(): number {
    return this.log.size;
  }

  /**
   * Apply committed rows in log order, skipping those already applied.
   * @throws Error when a row does not follow the log or its prefix root is not the one recomputed
   *   (a directory that does not match its table: a server error, never a proof).
   */
  private apply(rows: readonly repo.EntryRow[]): void {
    for (const r of rows) {
      if (r.seq <= this.log.size) continue;
      const next = this.next(this.prefix, r, this.log.size);
      const entry = encodeKeyDirectoryEntry({ index: r.vrfIndex, version: r.version, commitment: r.commitment, prefixRoot: r.prefixRoot });
      this.log.append(entry);
      this.prefix = next;
      this.head = entry;
    }
  }

  /**
   * `prefix` with entry `r` (which must follow entry `after`) applied.
   * @throws Error when it does not follow, or its prefix root is not the one recomputed.
   */
  private next(prefix: PrefixTree, r: repo.EntryRow, after: number): PrefixTree {
    if (r.seq !== after + 1) throw new Error(`key directory: entry ${r.seq} does not follow ${after}`);
    const next = prefix.with(r.vrfIndex, r.version, r.commitment, r.opening);
    if (!Buffer.from(next.root).equals(r.prefixRoot)) throw new Error(`key directory: entry ${r.seq} has another prefix root than its updates give`);
    return next;
  }

  /**
   * Load the whole table into an empty directory: the log from every entry, the prefix tree built
   * in one pass from each index's latest entry, its root checked against the newest entry's (the
   * intermediate roots are what an auditor replaying the entries checks).
   * @throws Error when the entries do not follow each other or the root is not the stored one.
   */
  private load(rows: readonly repo.EntryRow[]): void {
    const latest = new Map<string, repo.EntryRow>();
    rows.forEach((r, i) => {
      if (r.seq !== i + 1) throw new Error(`key directory: entry ${r.seq} does not follow ${i}`);
      latest.set(r.vrfIndex.toString('hex'), r);
    });
    const prefix = PrefixTree.build([...latest.values()].map((r) => ({ index: r.vrfIndex, version: r.version, commitment: r.commitment, opening: r.opening })));
    const last = rows.at(-1)!;
    if (!Buffer.from(prefix.root).equals(last.prefixRoot)) throw new Error(`key directory: the prefix root of entry ${last.seq} is not the one its entries give`);
    for (const r of rows) {
      this.head = encodeKeyDirectoryEntry({ index: r.vrfIndex, version: r.version, commitment: r.commitment, prefixRoot: r.prefixRoot });
      this.log.append(this.head);
    }
    this.prefix = prefix;
  }

  /**
   * Catch up with the entries committed so far (read outside any transaction: committed entries
   * only). An empty directory loads them all at once ({@link load}).
   */
  async sync(): Promise<void> {
    if (this.log.size === 0) {
      const all: repo.EntryRow[] = [];
      for (;;) {
        const page = await crossTenantRead(this.db, REASON, (db) => repo.entriesAfter(db, all.length));
        all.push(...page);
        if (page.length < 10_000) break;
      }
      if (this.log.size === 0 && all.length > 0) this.load(all);
      else this.apply(all);
      return;
    }
    for (;;) {
      const rows = await crossTenantRead(this.db, REASON, (db) => repo.entriesAfter(db, this.log.size));
      this.apply(rows);
      if (rows.length < 10_000) return;
    }
  }

  /**
   * Commit `bindings` in the caller's transaction (design §8.39: before the service answers with
   * them): each becomes its label's next version, unless the label's current value is already
   * this one. Holds the directory's lock until the transaction ends. The entries the transaction
   * sees beyond the shared state (committed by others since the last {@link sync}, or appended by
   * this transaction before) are replayed on a copy: the shared state only ever takes committed
   * entries, so a transaction that rolls back leaves nothing behind.
   */
  async publish(tx: Tx, bindings: readonly KeyBinding[]): Promise<void> {
    if (bindings.length === 0) return;
    const indexed = bindings.map((b) => ({ ...b, index: this.vrf.of(b.label).index })); // the VRF before the lock
    await repo.lockDirectory(tx);
    let prefix = this.prefix;
    let seq = this.log.size;
    for (;;) {
      const seen = await repo.entriesAfter(tx, seq);
      for (const r of seen) {
        prefix = this.next(prefix, r, seq);
        seq = r.seq;
      }
      if (seen.length < 10_000) break;
    }
    const rows: repo.NewEntry[] = [];
    for (const b of indexed) {
      const current = prefix.find(b.index)?.leaf;
      if (current && Buffer.from(hashing.commitment(current.opening, b.label, b.value)).equals(current.commitment)) continue;
      const opening = randomBytes(32);
      const version = (current?.version ?? 0) + 1;
      const commitment = Buffer.from(hashing.commitment(opening, b.label, b.value));
      prefix = prefix.with(b.index, version, commitment, opening);
      rows.push({ seq: ++seq, vrfIndex: b.index, version, commitment, opening, prefixRoot: Buffer.from(prefix.root) });
    }
    await repo.insertEntries(tx, rows);
  }

  /** The checkpoint of the tree of `size` leaves signed by the platform log key, without cosignatures. */
  async signedNote(size: number): Promise<string> {
    const signer = await this.keys.signer();
    const key = `${size}:${signer.keyId}`;
    let note = this.notes.get(key);
    if (!note) {
      note = signer.sign(`${signer.host}/keys\n${size}\n${b64(this.log.root(size))}\n`);
      if (this.notes.size >= 64) this.notes.delete(this.notes.keys().next().value as string);
      this.notes.set(key, note);
    }
    return note;
  }

  /** The signed checkpoint of the tree of `size` leaves with the cosignatures held for it. */
  private async checkpoint(size: number): Promise<KeyDirectoryHead['checkpoint']> {
    const note = await this.signedNote(size);
    const cosigned = await crossTenantRead(this.db, REASON, (db) => repo.cosignaturesOf(db, size));
    return { tree_size: size, root_hash: b64(this.log.root(size)), checkpoint: note + cosigned.map((c) => `${c.line}\n`).join('') };
  }

  /**
   * `GET /key-directory/entries`: up to `limit` log entries from leaf `start` of the tree the
   * instance holds (each entry's bytes are the log's leaf input).
   * @throws 400 when `start` is beyond the tree.
   */
  async entries(start: number, limit: number): Promise<KeyDirectoryEntries> {
    await this.sync();
    const size = this.log.size;
    if (start > size) throw badRequest(`start (${start}) is beyond the directory (${size} entries)`);
    const rows = (await crossTenantRead(this.db, REASON, (db) => repo.entriesAfter(db, start, limit))).filter((r) => r.seq <= size);
    const entries = rows.map((r) => b64(encodeKeyDirectoryEntry({ index: r.vrfIndex, version: r.version, commitment: r.commitment, prefixRoot: r.prefixRoot })));
    return { start, entries, tree_size: size };
  }

  /**
   * What a witness is sent for the newest checkpoint (C2SP tlog-witness `add-checkpoint`): the
   * size, the signed note, and the consistency proof from `old` (the witness's last size).
   * @throws 400 when `old` is beyond the tree.
   */
  async witnessRequest(old: number): Promise<{ size: number; root: Buffer; note: string; proof: string[] }> {
    await this.sync();
    const size = this.log.size;
    const proof = this.consistencyFrom(old, size);
    return { size, root: this.log.root(size), note: await this.signedNote(size), proof };
  }

  /** 400 unless `since` is at most `size`. */
  private consistencyFrom(since: number | undefined, size: number): string[] {
    if (since !== undefined && since > size) throw badRequest(`since (${since}) is larger than the directory (${size} entries)`);
    return this.log.consistency(since ?? 0, size).map(b64);
  }

  /** `GET /key-directory/checkpoint`: the newest checkpoint and the consistency proof from `since`. */
  async latest(since?: number): Promise<KeyDirectoryHead> {
    await this.sync();
    const size = this.log.size;
    const consistency = this.consistencyFrom(since, size);
    return { checkpoint: await this.checkpoint(size), consistency };
  }

  /**
   * `POST /key-directory/lookups`: the proofs that each label's current value is committed in the
   * newest checkpoint, against that one checkpoint (the values themselves are not answered).
   * @throws 404 naming the first label the directory does not hold; 400 when `since` is beyond the tree.
   */
  async lookupMany(labels: readonly string[], since?: number): Promise<KeyLookups> {
    const vrf = labels.map((label) => ({ label, ...this.vrf.of(label) }));
    await this.sync();
    const size = this.log.size;
    const prefix = this.prefix;
    const proofs = vrf.map(({ label, proof, index }) => {
      const found = prefix.find(index);
      if (!found) throw notFound(`key directory label ${label}`);
      return { label, version: found.leaf.version, opening: b64(found.leaf.opening), vrf_proof: b64(proof), prefix_path: found.path.map(b64) };
    });
    const consistency = this.consistencyFrom(since, size);
    const head = { leaf_index: size - 1, entry: b64(this.head!), audit_path: this.log.inclusion(size - 1, size).map(b64) };
    return { proofs, head, checkpoint: await this.checkpoint(size), consistency };
  }

  /**
   * `GET /key-directory/lookup`: {@link lookupMany} of one label, its proof's fields at the top.
   * @throws 404 when the directory holds no such label; 400 when `since` is beyond the tree.
   */
  async lookup(label: string, since?: number): Promise<KeyLookup> {
    const { proofs, ...rest } = await this.lookupMany([label], since);
    return { ...proofs[0]!, ...rest };
  }
}

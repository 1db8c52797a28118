/**
 * A witness's record of the latest checkpoint it cosigned for each log (C2SP tlog-witness: "the
 * witness is only required to keep track of the latest checkpoint it observed and verified"):
 * one JSON file, `{"version":1,"logs":{"<origin>":{"size":<tree size>,"root":"<base64 root hash>"}}}`,
 * replaced atomically (a temporary file, fsynced, renamed over it) so that a crash leaves the old
 * or the new record, never a part. One process per file: the record is read once, at open.
 */
import { readFile } from 'node:fs/promises';
import { base64ToBytes, bytesToBase64 } from '../../crypto/primitives.js';
import { TREE_HASH_BYTES } from '../../audit-log/merkle.js';
import { writeFileAtomic } from '../plugin.js';

/** The latest cosigned tree head of a log: its size and RFC 9162 root hash (32 bytes). */
export interface WitnessedTreeHead {
  size: number;
  root: Uint8Array;
}

interface StateFile {
  version: 1;
  logs: Record<string, { size: number; root: string }>;
}

/** The witness state of one data directory's `state.json`. */
export class WitnessState {
  private constructor(
    private readonly file: string,
    private readonly logs: Map<string, WitnessedTreeHead>,
  ) {}

  /**
   * Read the state file `file` (an empty state when it does not exist).
   * @throws Error when the file exists but is not a witness state (never silently reset: that
   *   would let a log roll back what this witness already cosigned)
   */
  static async open(file: string): Promise<WitnessState> {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return new WitnessState(file, new Map());
      throw err;
    }
    const bad = (why: string) => new Error(`${file} is not a witness state file: ${why}`);
    let json: StateFile;
    try {
      json = JSON.parse(text) as StateFile;
    } catch {
      throw bad('not JSON');
    }
    if (json?.version !== 1 || typeof json.logs !== 'object' || json.logs === null) throw bad('no version 1 "logs" object');
    const logs = new Map<string, WitnessedTreeHead>();
    for (const [origin, head] of Object.entries(json.logs)) {
      if (!Number.isSafeInteger(head?.size) || head.size < 0 || typeof head.root !== 'string') throw bad(`bad entry for ${origin}`);
      let root: Uint8Array;
      try {
        root = base64ToBytes(head.root, 'root hash');
      } catch {
        throw bad(`bad root hash for ${origin}`);
      }
      if (root.length !== TREE_HASH_BYTES) throw bad(`bad root hash for ${origin}`);
      logs.set(origin, { size: head.size, root });
    }
    return new WitnessState(file, logs);
  }

  /** The latest cosigned tree head of the log `origin`, or undefined when it never cosigned one. */
  get(origin: string): WitnessedTreeHead | undefined {
    return this.logs.get(origin);
  }

  /** Record `head` as the latest of `origin` and write the file; resolves once it is on disk. */
  async put(origin: string, head: WitnessedTreeHead): Promise<void> {
    const next = new Map(this.logs).set(origin, { size: head.size, root: Uint8Array.from(head.root) });
    const json: StateFile = { version: 1, logs: {} };
    for (const [o, h] of next) json.logs[o] = { size: h.size, root: bytesToBase64(h.root) };
    await writeFileAtomic(this.file, `${JSON.stringify(json, null, 2)}\n`);
    // In memory only once written: a failed write leaves the record as the file has it.
    this.logs.set(origin, next.get(origin)!);
  }
}

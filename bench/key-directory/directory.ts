/**
 * bench/key-directory, the directory itself (design §8.39), on a fresh PostgreSQL database
 * (dropped at the end) through the server's `KeyDirectory` (service.ts), as the areas use it:
 *
 *   append     `publish` of a batch of 100 one-time-prekey bindings of one new device in one
 *              transaction (lock, catch-up, VRF of the device's label family, 100 prefix-tree
 *              updates and commitments, one INSERT), then `sync` outside the timing (the instance
 *              applies what it committed, as the next lookup would); per-append cost at a size =
 *              the median of the 10 batches appended after it, / 100 (so the directory ends
 *              1,000 entries past the largest size). In memory too (memoryAppends);
 *   catch-up   a second instance's `sync` from nothing at the end (10,000-row pages, each
 *              entry's prefix root recomputed and checked), and the same pages read alone;
 *   proofs     `lookup` of 50 labels at each size: the answer's JSON bytes, its prefix path and
 *              its audit path (hashes);
 *   verify     `verifyKeyLookup` (SDK) on those answers at the final size, without a last
 *              checkpoint and with one 1,000 entries older (a consistency proof), and its parts:
 *              the checkpoint note (Ed25519), the Merkle inclusion of the newest entry, the VRF
 *              proof (RFC 9381), the commitment and prefix path.
 */
import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { sql } from 'drizzle-orm';
import { encodeKeyDirectoryEntry, oneTimePrekeyLabel, type KeyLookup } from '@parley/protocol';
import { trustFromInfo, verifyKeyLookup, type AcceptedCheckpoint } from '@parley/sdk';
import { openDatabase, type Database } from '../../packages/server/src/db/client.js';
import { runMigrations } from '../../packages/server/src/db/migrate.js';
import { withTenant } from '../../packages/server/src/db/tenant.js';
import { SecretBox } from '../../packages/server/src/lib/secret-box.js';
import { AuditLogKeys } from '../../packages/server/src/keys/index.js';
import { KeyDirectoryInfoService } from '../../packages/server/src/modules/key-directory/info.js';
import { LogTree } from '../../packages/server/src/modules/key-directory/log-tree.js';
import { PrefixTree } from '../../packages/server/src/modules/key-directory/prefix-tree.js';
import { KeyDirectory, type KeyBinding } from '../../packages/server/src/modules/key-directory/service.js';
import { DirectoryVrf } from '../../packages/server/src/modules/key-directory/vrf-key.js';
import { entriesAfter } from '../../packages/server/src/modules/key-directory/repo.js';
import { createDatabase } from '../relay/setup.js';
import { msSince, quantiles, type Quantiles } from './stats.js';
import type { ClientFigures, ClientInput } from './verify-client.js';

const execFileP = promisify(execFile);

const BATCH = 100;
const LOOKUPS = 50;

/** The directory's figures at one size. */
export interface SizeResult {
  size: number;
  /** `publish` of a batch of 100 on PostgreSQL, per append (ms): median of the 10 batches after this size. */
  publishPerAppendMs: number;
  /** `PrefixTree.with` + encoding + `LogTree.append`, per append (ms), in memory. */
  memoryPerAppendMs: number;
  /** `lookup` answers: JSON bytes, prefix path and audit path hashes (mean and largest). */
  answerBytes: { mean: number; max: number };
  prefixPath: { mean: number; max: number };
  auditPath: { mean: number; max: number };
}

/** Everything measured on the directory. */
export interface DirectoryResult {
  backend: string;
  sizes: SizeResult[];
  buildMs: number;
  /** Entries in the directory at the end (the last size + the 10 batches measured after it). */
  finalSize: number;
  catchUpMs: number;
  /** Of which reading the table's pages (the same query, rows mapped, nothing applied). */
  catchUpReadMs: number;
  verify: Quantiles;
  verifyWithConsistency: Quantiles;
  /** The check of a device already verified once: its VRF output cached by the client (`vrfOutputs`). */
  verifyKnownDevice: Quantiles;
  parts: { name: string; q: Quantiles }[];
}

const meanMax = (xs: number[]) => ({ mean: xs.reduce((a, b) => a + b, 0) / xs.length, max: Math.max(...xs) });
const median = (xs: number[]) => quantiles(xs).p50;

/**
 * Per-append time (ms) in memory at each of `sizes`: the median of 5 rounds of 1,000 appends
 * (`PrefixTree.with` on the tree of that size, the entry's encoding, `LogTree.append`) whose
 * prefix trees are dropped (persistent: the tree of that size is unchanged), after a warm-up.
 */
function memoryAppends(sizes: readonly number[]): Map<number, number> {
  const entry = () => ({ index: randomBytes(32), commitment: randomBytes(32), opening: randomBytes(32) });
  const out = new Map<number, number>();
  const log = new LogTree();
  let prefix = PrefixTree.EMPTY;
  const append = (base: PrefixTree, e: ReturnType<typeof entry>) => {
    const next = base.with(e.index, 1, e.commitment, e.opening);
    log.append(encodeKeyDirectoryEntry({ index: e.index, version: 1, commitment: e.commitment, prefixRoot: Buffer.from(next.root) }));
    return next;
  };
  const rounds = (base: PrefixTree) => {
    const ms: number[] = [];
    for (let r = 0; r < 5; r++) {
      const batch = Array.from({ length: 1000 }, entry);
      const start = process.hrtime.bigint();
      for (const e of batch) append(base, e);
      ms.push(msSince(start) / batch.length);
    }
    return median(ms);
  };
  rounds(Array.from({ length: 2000 }, entry).reduce((t, e) => t.with(e.index, 1, e.commitment, e.opening), PrefixTree.EMPTY)); // warm-up
  for (let size = 1; size <= Math.max(...sizes); size++) {
    prefix = append(prefix, entry());
    if (sizes.includes(size)) out.set(size, rounds(prefix));
  }
  return out;
}

/** The answers' figures at the directory's current size. */
function proofFigures(answers: KeyLookup[]) {
  return {
    answerBytes: meanMax(answers.map((a) => Buffer.byteLength(JSON.stringify(a)))),
    prefixPath: meanMax(answers.map((a) => a.prefix_path.length)),
    auditPath: meanMax(answers.map((a) => a.head.audit_path.length)),
  };
}

/** Run verify-client.ts on `input` in a child process (the same Node flags and loader) and read its figures. */
async function measureInClient(input: ClientInput): Promise<ClientFigures> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kt-bench-'));
  try {
    const file = path.join(dir, 'input.json');
    fs.writeFileSync(file, JSON.stringify(input));
    const script = fileURLToPath(new URL('./verify-client.ts', import.meta.url));
    const { stdout } = await execFileP(process.execPath, [...process.execArgv, script, file], { maxBuffer: 16 * 1024 * 1024 });
    return JSON.parse(stdout.trim().split('\n').at(-1)!) as ClientFigures;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Build a directory of `entries` + 1,000 one-time-prekey bindings (100 per new device) on a fresh
 * database under `adminUrl` and measure it at `sizes` (the largest is `entries`).
 */
export async function measureDirectory(adminUrl: string, entries: number, sizes: readonly number[], log: (line: string) => void): Promise<DirectoryResult> {
  const created = await createDatabase(adminUrl);
  let database: Database | undefined;
  try {
    database = await openDatabase({ databaseUrl: created.url, poolSize: 4 });
    const db = database.db;
    await runMigrations(database);
    const version = ((await db.execute(sql`select version() as v`)) as unknown as { rows: { v: string }[] }).rows[0]!.v.split(' on ')[0]!;
    const box = new SecretBox(randomBytes(32));
    const keys = new AuditLogKeys(db, box, 'http://127.0.0.1:8080');
    await keys.init();
    const vrf = await DirectoryVrf.load(db, box);
    const dir = new KeyDirectory(db, vrf, keys);
    const info = await new KeyDirectoryInfoService(keys, vrf.publicKey, async () => ({ witnesses: [], min_cosignatures: 0 })).info(randomUUID());
    const trust = trustFromInfo(info);
    const tenantId = randomUUID();

    const memory = memoryAppends(sizes);
    const batchMs: number[] = [];
    const samples: { label: string; value: Uint8Array }[] = [];
    const proofsAt = new Map<number, ReturnType<typeof proofFigures>>();
    /** Size -> index in `batchMs` of the first batch appended after it. */
    const batchesFrom = new Map<number, number>();
    const answersAt = new Map<number, { label: string; value: Uint8Array; answer: KeyLookup }[]>();
    /** A checkpoint accepted 1,000 entries before the end (a client's last one). */
    let older: AcceptedCheckpoint | undefined;
    const t0 = process.hrtime.bigint();
    const end = entries + 10 * BATCH;
    while (dir.size < end) {
      const deviceId = randomUUID();
      const bindings: KeyBinding[] = Array.from({ length: BATCH }, (_, j) => ({ label: oneTimePrekeyLabel(deviceId, `otk-${j}`), value: randomBytes(48) }));
      if (samples.length < 4 * LOOKUPS) samples.push(bindings[0]!);
      else samples[Math.floor(Math.random() * samples.length)] = bindings[0]!; // spread over the whole log
      const start = process.hrtime.bigint();
      await withTenant(db, tenantId, (tx) => dir.publish(tx, bindings));
      batchMs.push(msSince(start) / bindings.length);
      await dir.sync();
      const size = dir.size;
      if (size === entries - 1000) older = verifyKeyLookup(trust, undefined, samples[0]!.label, samples[0]!.value, await dir.lookup(samples[0]!.label)).checkpoint;
      if (sizes.includes(size)) {
        const picked = samples.slice(0, LOOKUPS);
        const answers = await Promise.all(picked.map((s) => dir.lookup(s.label)));
        answersAt.set(size, picked.map((s, i) => ({ ...s, answer: answers[i]! })));
        proofsAt.set(size, proofFigures(answers));
        batchesFrom.set(size, batchMs.length);
        log(`  ${size} entries`);
      }
    }
    const buildMs = msSince(t0);
    log(`  built in ${(buildMs / 1000).toFixed(1)} s`);

    const final = answersAt.get(entries)!;
    // Verification: a client's work, measured in a process of its own (a client's heap, not the
    // one holding the directory just built): verify-client.ts.
    const last = older;
    const since = last ? await Promise.all(final.map((x) => dir.lookup(x.label, last.size))) : [];
    const { verify, verifyWithConsistency, verifyKnownDevice, parts } = await measureInClient({
      info,
      samples: final.map((x, i) => ({ label: x.label, value: Buffer.from(x.value).toString('base64'), answer: x.answer, ...(last ? { since: since[i]! } : {}) })),
      ...(last ? { last: { size: last.size, root: Buffer.from(last.root).toString('base64') } } : {}),
    });

    // A second instance catching up from the table.
    const second = new KeyDirectory(db, vrf, keys);
    const c0 = process.hrtime.bigint();
    await second.sync();
    const catchUpMs = msSince(c0);
    if (second.size !== dir.size) throw new Error(`the second instance caught up to ${second.size} entries, not ${dir.size}`);
    // Of which reading the table: the same pages, read and mapped only.
    const r0 = process.hrtime.bigint();
    for (let seq = 0, rows = 1; rows > 0; ) {
      const page = await entriesAfter(db, seq);
      rows = page.length;
      seq = page.at(-1)?.seq ?? seq;
    }
    const catchUpReadMs = msSince(r0);

    return {
      backend: `${version} on 127.0.0.1`,
      sizes: sizes.map((size) => ({ size, memoryPerAppendMs: memory.get(size)!, publishPerAppendMs: median(batchMs.slice(batchesFrom.get(size)!, batchesFrom.get(size)! + 10)), ...proofsAt.get(size)! })),
      finalSize: dir.size,
      buildMs,
      catchUpMs,
      catchUpReadMs,
      verify,
      verifyWithConsistency,
      verifyKnownDevice,
      parts,
    };
  } finally {
    await database?.close();
    await created.drop();
  }
}

/**
 * The audit log as a verifiable transparency log (design §8.33), checked by the SDK's independent
 * verifier (`@parley/sdk` audit-log):
 * - the proof shapes of RFC 9162 §2.1.3.1 / §2.1.4.1 against the RFC's recursion computed by hand,
 *   for every leaf and size up to 40; the stored tree against the CT reference vectors (roots,
 *   inclusion and consistency proofs of the 8 reference leaves);
 * - the note signer against Go's sumdb/note test key and signature;
 * - the routes: key, checkpoint (kept, signed over every committed event), proofs, consistency,
 *   400/401/403/404 and tenant isolation;
 * - tampering with an event row, a tree node, a proof byte, a checkpoint (text or stored row) is
 *   detected, and so is a whole rewrite of the log that keeps the hash chain valid;
 * - consistency across thousands of appends; concurrent appends (and two instances on one
 *   PostgreSQL database) keep one tree; the scheduled publication; key rotation; the migration's
 *   rebuild of the trees of events stored before it.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createPrivateKey } from 'node:crypto';
import { parseVkey, verifyCheckpoint, verifyCheckpointConsistency, verifyEventProof, verifyConsistency, verifyInclusion, type AuditEventProof } from '@parley/sdk';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/client.js';
import type { SecretBox } from '../../src/lib/secret-box.js';
import { crossTenant, withTenant } from '../../src/db/tenant.js';
import { eventHash, GENESIS_HASH } from '../../src/modules/audit/chain.js';
import { AuditLogKeys, noteKeyId, retireAuditLogKeys, rotateAuditLogKey, signNote, vkeyOf } from '../../src/keys/index.js';
import { appendAudit } from '../../src/modules/audit/service.js';
import { AuditTransparency } from '../../src/modules/audit/transparency.js';
import { consistencyRanges, inclusionRanges, rangeNodes } from '../../src/lib/merkle-ranges.js';
import { appendLeaf, consistencyProof, inclusionProof, rootAt } from '../../src/modules/audit/tree.js';
import { createInvite, newOwner, activeAgent, type Owner } from '../../testing/flows.js';
import { backend, createPgDatabase, startApp, type TestApp } from '../../testing/harness.js';
import { CT_CONSISTENCY, CT_EMPTY_ROOT, CT_INCLUSION, CT_LEAVES, CT_ROOTS, referenceRoot as mth, sha256 as sha } from '@parley/sdk/testing';

const unhex = (h: string) => Buffer.from(h, 'hex');
const exec = async <T = any>(db: Db, q: ReturnType<typeof sql>) => ((await db.execute(q)) as unknown as { rows: T[] }).rows;
const b64 = (b: Uint8Array) => Buffer.from(b).toString('base64');

describe('proof shapes (RFC 9162 §2.1.3.1, §2.1.4.1)', () => {
  const inputs = Array.from({ length: 40 }, (_, i) => Uint8Array.of(i, i * 7, 3));
  it('every audit path and consistency proof, made of the ranges and tiled by complete subtrees, verifies', () => {
    for (const r of [{ start: 0, end: 40 }, { start: 32, end: 40 }, { start: 36, end: 39 }]) {
      const tiles = rangeNodes(r);
      expect(tiles.reduce((n, t) => n + 2 ** t.level, 0)).toBe(r.end - r.start);
      // Tiles are contiguous, largest first, each a complete subtree of the whole tree.
      let at = r.start;
      for (const t of tiles) {
        expect(t.index * 2 ** t.level).toBe(at);
        at += 2 ** t.level;
      }
    }
    for (let n = 1; n <= 40; n++) {
      const leaves = inputs.slice(0, n);
      const root = mth(leaves);
      for (let m = 0; m < n; m++) {
        const path = inclusionRanges(m, n).map((r) => mth(leaves.slice(r.start, r.end)));
        verifyInclusion(m, n, sha(Uint8Array.of(0), leaves[m]!), path, root);
      }
      for (let m = 1; m < n; m++) {
        const proof = consistencyRanges(m, n).map((r) => mth(leaves.slice(r.start, r.end)));
        verifyConsistency(m, n, mth(leaves.slice(0, m)), root, proof);
      }
    }
  });
});

describe('note signing (C2SP signed-note)', () => {
  it("signs as Go's sumdb/note: the reference key's signature line, byte for byte", () => {
    // PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz (golang.org/x/mod/sumdb/note tests)
    const seed = Buffer.from('AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz', 'base64').subarray(1);
    const vkey = 'PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW';
    const pub = Buffer.from(parseVkey(vkey).publicKey);
    expect(vkeyOf('PeterNeumann', pub)).toBe(vkey);
    const privateKey = createPrivateKey({ key: { kty: 'OKP', crv: 'Ed25519', x: pub.toString('base64url'), d: seed.toString('base64url') }, format: 'jwk' });
    const text = "If you think cryptography is the answer to your problem,\nthen you don't know what your problem is.\n";
    expect(signNote(text, [{ name: 'PeterNeumann', keyId: noteKeyId('PeterNeumann', pub), privateKey }])).toBe(
      `${text}\n— PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n`,
    );
  });
});

describe('audit transparency log (HTTP)', () => {
  let t: TestApp;
  let owner: Owner;
  let vkey: string;
  const db = (): Db => t.app.parley.database.db;
  const get = (url: string, o: Owner = owner) => t.request({ method: 'GET', url, headers: o.auth });
  const checkpoint = async (o: Owner = owner) => {
    const res = await get('/api/v1/audit/checkpoint', o);
    expect(res.status).toBe(200);
    return res.body as { tree_size: number; root_hash: string; created_at: string; checkpoint: string };
  };
  const proofOf = async (eventId: string, query = '', o: Owner = owner) => t.request({ method: 'GET', url: `/api/v1/audit/events/${eventId}/proof${query}`, headers: o.auth });
  const events = async (o: Owner = owner) => ((await get('/api/v1/audit/events?limit=200', o)).body.events as { event_id: string; hash: string }[]).reverse();
  const append = (tenantId: string, n: number) =>
    withTenant(db(), tenantId, async (tx) => {
      for (let i = 0; i < n; i++) await appendAudit(tx, tenantId, { type: 'settings.updated', actor: 'test', data: { i } });
    });

  beforeAll(async () => {
    t = await startApp();
    owner = await newOwner(t);
    for (let i = 0; i < 5; i++) await createInvite(t, owner);
    const key = await t.request({ method: 'GET', url: '/api/v1/audit/log-key' });
    expect(key.status).toBe(200);
    vkey = key.body.vkey;
  });
  afterAll(() => t.close());

  it('publishes the key (no auth) as a C2SP vkey named <host>/audit-log', async () => {
    const res = await t.request({ method: 'GET', url: '/api/v1/audit/log-key' });
    expect(res.body).toMatchObject({ key_name: `${new URL(t.config.publicUrl).host}/audit-log`, previous: [] });
    expect(Buffer.from(parseVkey(res.body.vkey).publicKey).toString('hex')).toBe(res.body.public_key);
  });

  it('signs a checkpoint over every committed event, keeps it, and answers it again while the log does not grow', async () => {
    const c = await checkpoint();
    const v = verifyCheckpoint(c.checkpoint, vkey, { tenantId: owner.tenantId });
    const all = await events();
    expect(v).toMatchObject({ tenantId: owner.tenantId, treeSize: all.length, timestamp: c.created_at, origin: `${new URL(t.config.publicUrl).host}/audit/${owner.tenantId}` });
    expect(c.tree_size).toBe(all.length);
    expect(b64(v.rootHash)).toBe(c.root_hash);
    expect(v.rootHash).toEqual(new Uint8Array(mth(all.map((e) => unhex(e.hash)))));
    expect(await checkpoint()).toEqual(c);
    await createInvite(t, owner);
    const next = await checkpoint();
    expect(next.tree_size).toBe(all.length + 1);
    verifyCheckpoint(next.checkpoint, vkey, { tenantId: owner.tenantId });
  });

  it("answers each event's proof bundle, which verifies with the key alone, at the latest and at an earlier kept size", async () => {
    const early = await checkpoint();
    await createInvite(t, owner);
    const late = await checkpoint();
    for (const e of await events()) {
      const res = await proofOf(e.event_id);
      expect(res.status).toBe(200);
      const p = res.body as AuditEventProof;
      expect(p.tree_size).toBe(late.tree_size);
      expect(p.checkpoint).toBe(late.checkpoint);
      expect(verifyEventProof(p, vkey, { tenantId: owner.tenantId })).toMatchObject({ eventId: e.event_id, eventHash: e.hash });
    }
    const first = (await events())[0]!;
    const atEarly = await proofOf(first.event_id, `?tree_size=${early.tree_size}`);
    expect(atEarly.body.checkpoint).toBe(early.checkpoint);
    expect(verifyEventProof(atEarly.body, vkey).checkpoint.treeSize).toBe(early.tree_size);
    // The later event is not in the earlier tree; a size no checkpoint was answered for is refused.
    const last = (await events()).at(-1)!;
    expect((await proofOf(last.event_id, `?tree_size=${early.tree_size}`)).status).toBe(400);
    expect((await proofOf(first.event_id, "?tree_size=2")).body.detail).toMatch(/no checkpoint of tree size 2/);
    expect((await proofOf(first.event_id, '?tree_size=0')).status).toBe(400);
    expect((await proofOf(first.event_id, '?tree_size=abc')).status).toBe(400);
  });

  it('answers consistency proofs between kept checkpoints, which verify; refuses other sizes', async () => {
    const a = await checkpoint();
    await createInvite(t, owner);
    await createInvite(t, owner);
    const b = await checkpoint();
    const res = await get(`/api/v1/audit/consistency?first=${a.tree_size}&second=${b.tree_size}`);
    expect(res.status).toBe(200);
    const v = verifyCheckpointConsistency(a.checkpoint, b.checkpoint, res.body, vkey, { tenantId: owner.tenantId });
    expect([v.older.treeSize, v.newer.treeSize]).toEqual([a.tree_size, b.tree_size]);
    expect((await get(`/api/v1/audit/consistency?first=${b.tree_size}&second=${b.tree_size}`)).body).toEqual({ first: b.tree_size, second: b.tree_size, proof: [] });
    for (const q of [`first=0&second=${b.tree_size}`, `first=${b.tree_size}&second=${a.tree_size}`, `first=${a.tree_size + 1}&second=${b.tree_size}`, `first=${a.tree_size}&second=${b.tree_size + 5}`, 'first=x&second=2', `first=${a.tree_size}`]) {
      expect((await get(`/api/v1/audit/consistency?${q}`)).status, q).toBe(400);
    }
    // The proof against the wrong pair does not verify.
    expect(() => verifyCheckpointConsistency(b.checkpoint, a.checkpoint, res.body, vkey)).toThrow();
  });

  it('route matrix: 401 without auth, 403 for a device token, 404 for another tenant’s event', async () => {
    const other = await newOwner(t);
    const agent = await activeAgent(t, other);
    const mine = (await events())[0]!;
    for (const url of ['/api/v1/audit/checkpoint', `/api/v1/audit/events/${mine.event_id}/proof`, '/api/v1/audit/consistency?first=1&second=1']) {
      expect((await t.request({ method: 'GET', url })).status, url).toBe(401);
      expect((await t.request({ method: 'GET', url, headers: agent.auth })).status, url).toBe(403);
    }
    expect((await proofOf(mine.event_id, '', other)).status).toBe(404);
    expect((await proofOf('00000000-0000-4000-8000-000000000000')).status).toBe(404);
    // Each tenant has its own log: the other tenant's checkpoint does not verify as this tenant's.
    const theirs = await checkpoint(other);
    expect(() => verifyCheckpoint(theirs.checkpoint, vkey, { tenantId: owner.tenantId })).toThrow(/tenant/);
  });

  it('detects a tampered event row, tree node, proof byte and checkpoint', async () => {
    const o = await newOwner(t);
    for (let i = 0; i < 6; i++) await createInvite(t, o);
    await checkpoint(o);
    const [, second, third] = await events(o);
    const bundle = (id: string) => proofOf(id, '', o).then((r) => r.body as AuditEventProof);
    const good = await bundle(second!.event_id);
    expect(() => verifyEventProof(good, vkey)).not.toThrow();

    // An edited row: its contents no longer hash to the leaf.
    await db().execute(sql`update audit_events set data = '{"label":"forged"}'::jsonb where tenant_id = ${o.tenantId} and seq = 2`);
    expect(() => verifyEventProof({ ...good, event: { ...good.event, data: { label: 'forged' } } }, vkey)).toThrow(expect.objectContaining({ code: 'event_mismatch' }));
    expect(() => verifyEventProof(good, vkey)).not.toThrow();
    const edited = await bundle(second!.event_id);
    expect(() => verifyEventProof(edited, vkey)).toThrow(expect.objectContaining({ code: 'event_mismatch' }));
    // The row edited with a recomputed hash: the leaf in the tree is the old one.
    const [r2] = await exec(db(), sql`select id, type, actor, subject, data, created_at, prev_hash from audit_events where tenant_id = ${o.tenantId} and seq = 2`);
    const rehashed = eventHash(r2.prev_hash, { event_id: r2.id, tenant_id: o.tenantId, seq: 2, type: r2.type, actor: r2.actor, subject: r2.subject, data: r2.data, created_at: new Date(r2.created_at).toISOString() });
    await db().execute(sql`update audit_events set hash = ${rehashed} where tenant_id = ${o.tenantId} and seq = 2`);
    expect(() => verifyEventProof(edited, vkey)).toThrow();
    const recomputed = await bundle(second!.event_id);
    expect(() => verifyEventProof(recomputed, vkey)).toThrow(expect.objectContaining({ code: 'event_mismatch' }));

    // A tree node changed: the path no longer leads to the signed root.
    const before = await bundle(third!.event_id);
    expect(() => verifyEventProof(before, vkey)).not.toThrow();
    await db().execute(sql`update audit_tree_nodes set hash = sha256(hash) where tenant_id = ${o.tenantId} and level = 1 and idx = 0`);
    const broken = await bundle(third!.event_id);
    expect(() => verifyEventProof(broken, vkey)).toThrow(expect.objectContaining({ code: 'inclusion_failed' }));

    // Any byte of a good proof or of its checkpoint changed.
    const flipped = Buffer.from(before.audit_path[1]!, 'base64');
    flipped[7]! ^= 1;
    expect(() => verifyEventProof({ ...before, audit_path: before.audit_path.map((p, i) => (i === 1 ? flipped.toString('base64') : p)) }, vkey)).toThrow(expect.objectContaining({ code: 'inclusion_failed' }));
    expect(() => verifyEventProof({ ...before, leaf_index: before.leaf_index + 1 }, vkey)).toThrow();
    const lines = before.checkpoint.split('\n');
    const biggerSize = [lines[0], String(Number(lines[1]) + 1), ...lines.slice(2)].join('\n');
    expect(() => verifyEventProof({ ...before, checkpoint: biggerSize }, vkey)).toThrow(expect.objectContaining({ code: 'bad_signature' }));
    for (const i of [3, before.checkpoint.indexOf('\n— ') + 10, before.checkpoint.length - 5]) {
      const c = before.checkpoint;
      const changed = c.slice(0, i) + (c[i] === 'A' ? 'B' : 'A') + c.slice(i + 1);
      expect(() => verifyCheckpoint(changed, vkey), `byte ${i}`).toThrow();
    }
    // A stored checkpoint rewritten in the database does not verify either.
    await db().execute(sql`update audit_checkpoints set note = replace(note, ${lines[2]!}, ${b64(sha(Buffer.from('forged')))}) where tenant_id = ${o.tenantId}`);
    const rewritten = (await checkpoint(o)).checkpoint;
    expect(() => verifyCheckpoint(rewritten, vkey)).toThrow(expect.objectContaining({ code: 'bad_signature' }));
  });

  it('a rewrite of the history that keeps the hash chain valid is caught by the consistency proof', async () => {
    const o = await newOwner(t);
    for (let i = 0; i < 7; i++) await createInvite(t, o);
    const saved = await checkpoint(o); // what the owner kept
    // The database is rewritten from event 3 on: contents, chain hashes and the whole tree.
    const rows = await exec(db(), sql`select id, seq, type, actor, subject, data, created_at from audit_events where tenant_id = ${o.tenantId} order by seq`);
    let prev = GENESIS_HASH;
    const hashes: string[] = [];
    for (const r of rows) {
      const data = Number(r.seq) >= 3 ? { ...r.data, label: 'rewritten' } : r.data;
      const hash = eventHash(prev, { event_id: r.id, tenant_id: o.tenantId, seq: Number(r.seq), type: r.type, actor: r.actor, subject: r.subject, data, created_at: new Date(r.created_at).toISOString() });
      await db().execute(sql`update audit_events set data = ${JSON.stringify(data)}::jsonb, prev_hash = ${prev}, hash = ${hash} where id = ${r.id}`);
      hashes.push(hash);
      prev = hash;
    }
    await db().execute(sql`delete from audit_tree_nodes where tenant_id = ${o.tenantId}`);
    await crossTenant(db(), 'test: the attacker rebuilds the tree', async (tx) => {
      for (const [i, h] of hashes.entries()) await appendLeaf(tx, o.tenantId, i, unhex(h));
    });
    expect((await get('/api/v1/audit/verify', o)).body.valid).toBe(true); // the chain alone sees nothing
    await createInvite(t, o);
    const after = await checkpoint(o);
    expect(() => verifyCheckpoint(after.checkpoint, vkey)).not.toThrow(); // the service signs what it has
    const proof = (await get(`/api/v1/audit/consistency?first=${saved.tree_size}&second=${after.tree_size}`, o)).body;
    expect(() => verifyCheckpointConsistency(saved.checkpoint, after.checkpoint, proof, vkey)).toThrow(expect.objectContaining({ code: 'consistency_failed' }));
    // And an event's proof at the saved size leads to another root than the one the owner holds.
    const third = (await events(o))[2]!;
    const atSaved = (await proofOf(third.event_id, `?tree_size=${saved.tree_size}`, o)).body;
    expect(() => verifyEventProof(atSaved, vkey)).toThrow(expect.objectContaining({ code: 'inclusion_failed' }));
  });

  it('keeps the tree consistent across thousands of appends: every checkpoint extends the one before', { timeout: 120_000 }, async () => {
    const o = await newOwner(t);
    const kept: { tree_size: number; checkpoint: string }[] = [];
    for (const n of [1, 6, 1, 120, 385, 512, 1, 1000, 473]) {
      await append(o.tenantId, n);
      kept.push(await checkpoint(o));
    }
    const size = kept.at(-1)!.tree_size;
    expect(size).toBeGreaterThanOrEqual(2499);
    for (let i = 1; i < kept.length; i++) {
      for (const j of [0, i - 1]) {
        const proof = (await get(`/api/v1/audit/consistency?first=${kept[j]!.tree_size}&second=${kept[i]!.tree_size}`, o)).body;
        verifyCheckpointConsistency(kept[j]!.checkpoint, kept[i]!.checkpoint, proof, vkey, { tenantId: o.tenantId });
      }
    }
    const hashes = (await exec<{ hash: string }>(db(), sql`select hash from audit_events where tenant_id = ${o.tenantId} order by seq`)).map((r) => unhex(r.hash));
    expect(verifyCheckpoint(kept.at(-1)!.checkpoint, vkey).rootHash).toEqual(new Uint8Array(mth(hashes)));
    const all = await exec<{ id: string }>(db(), sql`select id from audit_events where tenant_id = ${o.tenantId} order by seq`);
    for (const i of [0, 1, 511, 512, 1023, 2047, size - 2, size - 1]) verifyEventProof((await proofOf(all[i]!.id, '', o)).body, vkey, { tenantId: o.tenantId });
  });

  it('concurrent appends keep one tree', async () => {
    const o = await newOwner(t);
    await Promise.all(Array.from({ length: 24 }, () => createInvite(t, o)));
    const c = await checkpoint(o);
    const all = await events(o);
    expect(verifyCheckpoint(c.checkpoint, vkey).rootHash).toEqual(new Uint8Array(mth(all.map((e) => unhex(e.hash)))));
  });
});

describe('audit transparency log (job, key rotation, migration, grants)', () => {
  let t: TestApp;
  let vkey: string;
  const db = (): Db => t.app.parley.database.db;
  const checkpoint = async (o: Owner) => (await t.request({ method: 'GET', url: '/api/v1/audit/checkpoint', headers: o.auth })).body as { tree_size: number; checkpoint: string };
  beforeAll(async () => {
    t = await startApp();
    vkey = (await t.request({ method: 'GET', url: '/api/v1/audit/log-key' })).body.vkey;
  });
  afterAll(() => t.close());

  it("migration 0027 rebuilds, from the chains alone, the trees the appends built", async () => {
    for (let i = 0; i < 3; i++) {
      const o = await newOwner(t);
      await withTenant(db(), o.tenantId, async (tx) => {
        for (let j = 0; j < 37 * (i + 1); j++) await appendAudit(tx, o.tenantId, { type: 'settings.updated', actor: 'test' });
      });
    }
    const nodes = () => exec(db(), sql`select tenant_id, level, idx, encode(hash, 'hex') as h from audit_tree_nodes order by 1, 2, 3`);
    const before = await nodes();
    expect(before.length).toBeGreaterThan(400);
    const migration = fs.readFileSync(fileURLToPath(new URL('../../drizzle/0027_audit_tree_rls.sql', import.meta.url)), 'utf8');
    const [leaves, levels] = migration.split('--> statement-breakpoint');
    await db().execute(sql`delete from audit_tree_nodes`);
    await db().execute(sql.raw(leaves!));
    await db().execute(sql.raw(levels!));
    expect(await nodes()).toEqual(before);
  });

  it('the scheduled job signs a checkpoint for every log that grew, and nothing for the others', async () => {
    const transparency = new AuditTransparency(db(), await keysOf(db(), t.app.parley.secrets, t.config.publicUrl));
    await transparency.publishCheckpoints();
    const o = await newOwner(t);
    await createInvite(t, o);
    await createInvite(t, o);
    const run = await transparency.publishCheckpoints();
    expect(run.signed).toBe(1);
    expect((await transparency.publishCheckpoints()).signed).toBe(0);
    const kept = await exec<{ tree_size: number; note: string }>(db(), sql`select tree_size, note from audit_checkpoints where tenant_id = ${o.tenantId}`);
    expect(kept).toHaveLength(1);
    expect(verifyCheckpoint(kept[0]!.note, vkey, { tenantId: o.tenantId }).treeSize).toBe(2);
    // It is the checkpoint an owner gets and can ask proofs for.
    expect((await checkpoint(o)).checkpoint).toBe(kept[0]!.note);
  });

  it('key rotation: the old key co-signs until retired; sizes signed before are signed again by the new key', async () => {
    const keys = await keysOf(db(), t.app.parley.secrets, t.config.publicUrl, 0);
    const transparency = new AuditTransparency(db(), keys);
    const o = await newOwner(t);
    await createInvite(t, o);
    const before = await transparency.latest(o.tenantId);
    const rotated = await rotateAuditLogKey(db(), t.app.parley.secrets);
    expect(rotated.previous).toBe(vkey);
    try {
      expect(await keys.info()).toMatchObject({ vkey: rotated.vkey, previous: [{ vkey }] });
      const again = await transparency.latest(o.tenantId);
      expect(again.tree_size).toBe(before.tree_size);
      expect(again.checkpoint).not.toBe(before.checkpoint);
      for (const k of [vkey, rotated.vkey]) expect(verifyCheckpoint(again.checkpoint, k).rootHash).toEqual(verifyCheckpoint(before.checkpoint, vkey).rootHash);
      expect(verifyCheckpoint(again.checkpoint, [vkey, rotated.vkey]).signedBy).toHaveLength(2);
      expect((await retireAuditLogKeys(db())).retired).toEqual([vkey]);
      await createInvite(t, o);
      const later = await transparency.latest(o.tenantId);
      expect(() => verifyCheckpoint(later.checkpoint, vkey)).toThrow(/signed by none/);
      verifyCheckpoint(later.checkpoint, rotated.vkey);
    } finally {
      // Give the service's other tests their key back.
      await crossTenant(db(), 'test', (tx) => tx.execute(sql`delete from platform_keys where purpose like 'audit-log%'`));
    }
  });

  it('the application role cannot rewrite the tree or the checkpoints', async () => {
    const o = await newOwner(t);
    await createInvite(t, o);
    await checkpoint(o);
    for (const stmt of [sql`update audit_tree_nodes set hash = hash`, sql`delete from audit_checkpoints`, sql`delete from audit_tree_nodes`]) {
      await expect(
        db().transaction(async (tx) => {
          await tx.execute(sql`select set_config('app.tenant_id', ${o.tenantId}, true), set_config('role', 'parley_app', true)`);
          await tx.execute(stmt);
        }),
      ).rejects.toThrow();
    }
  });
});

/** A second handle on the service's audit-log key (same database), reloading every `refreshMs`. */
async function keysOf(db: Db, box: SecretBox, publicUrl: string, refreshMs?: number): Promise<AuditLogKeys> {
  const keys = new AuditLogKeys(db, box, publicUrl, refreshMs);
  await keys.init();
  return keys;
}

describe('the stored tree (CT reference vectors)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp();
  });
  afterAll(() => t.close());

  it('gives the RFC 6962 roots, audit paths and consistency proofs of the reference leaves', async () => {
    const db = t.app.parley.database.db;
    const tenantId = (await newOwner(t)).tenantId;
    const h = (hex: string[]) => hex.map((x) => unhex(x));
    await crossTenant(db, 'test: a tree over the reference leaves', async (tx) => {
      await tx.execute(sql`delete from audit_tree_nodes where tenant_id = ${tenantId}`);
      for (const [i, leaf] of CT_LEAVES.entries()) await appendLeaf(tx, tenantId, i, leaf);
      for (let n = 1; n <= 8; n++) expect((await rootAt(tx, tenantId, n)).toString('hex'), `root ${n}`).toBe(CT_ROOTS[n - 1]);
      expect((await rootAt(tx, tenantId, 0)).toString('hex')).toBe(CT_EMPTY_ROOT);
      for (const v of CT_INCLUSION) expect((await inclusionProof(tx, tenantId, v.index, v.size)).path, `path ${v.index}/${v.size}`).toEqual(h(v.path));
      for (const v of CT_CONSISTENCY) expect(await consistencyProof(tx, tenantId, v.first, v.second), `consistency ${v.first}->${v.second}`).toEqual(h(v.proof));
      // Nothing of it stays: this tenant's tree must go on matching its chain.
      throw new Rollback();
    }).catch((err: unknown) => {
      if (!(err instanceof Rollback)) throw err;
    });
  });
});

class Rollback extends Error {}

describe.skipIf(backend !== 'postgres')('two instances on one database', () => {
  it('append to one tree at once, share the key, and answer the same checkpoints', { timeout: 120_000 }, async () => {
    const pg = await createPgDatabase();
    // One DATA_DIR: the dev identity provider's key, so an owner token is valid on both instances.
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-two-'));
    const a = await startApp({ databaseUrl: pg.url, dataDir });
    const b = await startApp({ databaseUrl: pg.url, dataDir });
    try {
      const key = (await a.request({ method: 'GET', url: '/api/v1/audit/log-key' })).body;
      expect((await b.request({ method: 'GET', url: '/api/v1/audit/log-key' })).body).toEqual(key);
      const sub = `two-${Date.now()}@example.com`;
      const tokenA = await a.ownerToken(sub);
      const tenant = (await a.request({ method: 'POST', url: '/api/v1/tenants', headers: { authorization: `Bearer ${tokenA}` }, payload: { name: 'Two' } })).body.tenant_id as string;
      const auth = { authorization: `Bearer ${tokenA}` };
      const invite = (app: TestApp) => app.request({ method: 'POST', url: '/api/v1/invites', headers: auth, payload: {} });
      const results = await Promise.all(Array.from({ length: 60 }, (_, i) => invite(i % 2 ? a : b)));
      expect(results.every((r) => r.status === 201)).toBe(true);
      const cA = (await a.request({ method: 'GET', url: '/api/v1/audit/checkpoint', headers: auth })).body;
      const cB = (await b.request({ method: 'GET', url: '/api/v1/audit/checkpoint', headers: auth })).body;
      expect(cB).toEqual(cA);
      const list = ((await b.request({ method: 'GET', url: '/api/v1/audit/events?limit=200', headers: auth })).body.events as { event_id: string; hash: string }[]).reverse();
      expect(list.length).toBe(cA.tree_size);
      expect(verifyCheckpoint(cA.checkpoint, key.vkey, { tenantId: tenant }).rootHash).toEqual(new Uint8Array(mth(list.map((e) => unhex(e.hash)))));
      expect((await a.request({ method: 'GET', url: '/api/v1/audit/verify', headers: auth })).body.valid).toBe(true);
      for (const e of [list[0]!, list[31]!, list.at(-1)!]) verifyEventProof((await b.request({ method: 'GET', url: `/api/v1/audit/events/${e.event_id}/proof`, headers: auth })).body, key.vkey);
    } finally {
      await a.close();
      await b.close();
      await pg.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

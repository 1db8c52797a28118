/**
 * The key directory (design §8.39), checked by the SDK's independent verifier (`@parley/sdk`
 * key-transparency): every device key and prekey the service stores is committed before it can be
 * served, a lookup proves the served key is the current one for its label, and the malicious-server
 * cases are caught: a key swapped in the database, a stale checkpoint, a forked directory, a
 * prekey swapped in a claim. Plus the prefix tree's canonical shape, the append-only table, the
 * backfill of keys stored before the directory, and the routes' 400/401/404.
 */
import { generateKeyPairSync, randomBytes, randomUUID } from 'node:crypto';
import { decodeKeyDirectoryEntry, deviceKeysLabel, deviceKeysValue, indexBit, keyDirectoryHashing, oneTimePrekeyLabel, oneTimePrekeyValue, prefixRootFromPath, signedPrekeyLabel, signedPrekeyValue, type KeyLookup } from '@parley/protocol';
import { KeyTransparencyError, trustFromInfo, verifyKeyLookup, verifyKeyLookups, type AcceptedCheckpoint, type KeyDirectoryTrust } from '@parley/sdk';
import { referenceRoot } from '@parley/sdk/testing';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/client.js';
import { PrefixTree } from '../../src/modules/key-directory/prefix-tree.js';
import { sha256 } from '../../src/modules/key-directory/log-tree.js';
import { backfillKeyDirectory } from '../../src/jobs/key-directory-backfill.js';
import { activeAgent, appWithAgent, type Agent } from '../../testing/flows.js';
import { newDeviceKeys } from '../../testing/keys.js';

const hashing = keyDirectoryHashing(sha256);

describe('prefix tree', () => {
  const entry = () => ({ index: randomBytes(32), version: 1 + (randomBytes(1)[0]! % 3), commitment: randomBytes(32), opening: randomBytes(32) });

  it('has one root for one set of entries, whatever the order they came in, and every path leads to it', () => {
    const entries = Array.from({ length: 300 }, entry);
    const build = (list: typeof entries) => list.reduce((t, e) => t.with(e.index, e.version, e.commitment, e.opening), PrefixTree.EMPTY);
    const a = build(entries);
    const b = build([...entries].reverse());
    expect(Buffer.from(a.root)).toEqual(Buffer.from(b.root));
    for (const e of entries) {
      const found = a.find(e.index)!;
      expect(found.leaf.version).toBe(e.version);
      const leaf = hashing.prefixLeaf(e.index, e.version, e.commitment);
      expect(Buffer.from(prefixRootFromPath(hashing, e.index, leaf, found.path))).toEqual(Buffer.from(a.root));
      // Logarithmic: 300 random indexes sit well under 40 deep.
      expect(found.path.length).toBeLessThan(40);
    }
    expect(a.find(randomBytes(32))).toBeUndefined();
  });

  it('builds in one pass the same tree as the updates one by one', () => {
    const entries = Array.from({ length: 200 }, entry);
    const byUpdates = entries.reduce((t, e) => t.with(e.index, e.version, e.commitment, e.opening), PrefixTree.EMPTY);
    expect(Buffer.from(PrefixTree.build(entries).root)).toEqual(Buffer.from(byUpdates.root));
    expect(Buffer.from(PrefixTree.build([]).root)).toEqual(Buffer.alloc(32));
    expect(() => PrefixTree.build([entries[0]!, entries[0]!])).toThrow(/one index/);
  });

  it('answers a new tree on each update and leaves the old one as it was (path copying)', () => {
    const e = entry();
    const one = PrefixTree.EMPTY.with(e.index, 1, e.commitment, e.opening);
    const two = one.with(e.index, 2, randomBytes(32), randomBytes(32));
    expect(one.find(e.index)!.leaf.version).toBe(1);
    expect(two.find(e.index)!.leaf.version).toBe(2);
    expect(Buffer.from(one.root)).not.toEqual(Buffer.from(two.root));
  });

  it('places two indexes that share a long prefix below their first differing bit', () => {
    const a = Buffer.alloc(32, 0);
    const b = Buffer.alloc(32, 0);
    b[3] = 0x01; // bit 31 differs
    const t = PrefixTree.EMPTY.with(a, 1, randomBytes(32), randomBytes(32)).with(b, 1, randomBytes(32), randomBytes(32));
    expect(t.find(a)!.path).toHaveLength(32);
    expect(indexBit(b, 31)).toBe(1);
  });
});

describe('key directory over the API', () => {
  const s = appWithAgent();
  const db = (): Db => s.t.app.parley.database.db;

  async function trust(auth: Record<string, string>): Promise<KeyDirectoryTrust> {
    const res = await s.t.request({ method: 'GET', url: '/api/v1/key-directory', headers: auth });
    expect(res.status).toBe(200);
    expect(res.body.origin).toBe(`${new URL(s.t.config.publicUrl).host}/keys`);
    return trustFromInfo(res.body);
  }
  const lookup = async (auth: Record<string, string>, label: string, since?: number): Promise<KeyLookup> => {
    const res = await s.t.request({ method: 'GET', url: `/api/v1/key-directory/lookup?label=${encodeURIComponent(label)}${since ? `&since=${since}` : ''}`, headers: auth });
    expect(res.status).toBe(200);
    return res.body;
  };
  const deviceValue = (a: Agent) => deviceKeysValue({ identity_public_key: a.keys.identityPublicKey, ephemeral_public_key: a.keys.ephemeralPublicKey });

  it("commits an enrolled device's keys: its owner and another tenant's agent verify them, and the answer holds no key", async () => {
    const t = await trust(s.owner.auth);
    const answer = await lookup(s.owner.auth, deviceKeysLabel(s.agent.deviceId));
    expect(JSON.stringify(answer)).not.toContain(s.agent.keys.identityPublicKey);
    const { checkpoint, version } = verifyKeyLookup(t, undefined, deviceKeysLabel(s.agent.deviceId), deviceValue(s.agent), answer);
    expect(version).toBe(1);
    expect(checkpoint.size).toBeGreaterThanOrEqual(1);
    // Another key than the committed one is refused.
    const other = deviceKeysValue({ identity_public_key: 'ab'.repeat(32), ephemeral_public_key: s.agent.keys.ephemeralPublicKey });
    expect(() => verifyKeyLookup(t, undefined, deviceKeysLabel(s.agent.deviceId), other, answer)).toThrow(KeyTransparencyError);
  });

  it('commits published prekeys; a claimed bundle verifies, and a prekey swapped in the database is refused', async () => {
    const agent = await activeAgent(s.t, s.owner);
    const spk = { key_id: 'spk1', public_key: x25519(), signature: randomBytes(64).toString('base64') };
    const pub = await s.t.request({ method: 'POST', url: '/api/v1/prekeys', headers: agent.auth, payload: { signed_prekey: spk, one_time: [{ key_id: 'otpk1', public_key: x25519() }] } });
    expect(pub.status).toBe(201);
    const claim = await s.t.request({ method: 'POST', url: '/api/v1/prekeys/claim', headers: s.agent.auth, payload: { device_id: agent.deviceId } });
    expect(claim.status).toBe(200);
    const t = await trust(s.agent.auth);
    verifyKeyLookup(t, undefined, signedPrekeyLabel(agent.deviceId), signedPrekeyValue(claim.body.signed_prekey), await lookup(s.agent.auth, signedPrekeyLabel(agent.deviceId)));
    const otLabel = oneTimePrekeyLabel(agent.deviceId, claim.body.one_time_prekey.key_id);
    verifyKeyLookup(t, undefined, otLabel, oneTimePrekeyValue(claim.body.one_time_prekey), await lookup(s.agent.auth, otLabel));

    // The whole bundle and the device's keys in one lookup, against one checkpoint, one VRF proof for all.
    const labels = [deviceKeysLabel(agent.deviceId), signedPrekeyLabel(agent.deviceId), otLabel];
    const many = await s.t.request({ method: 'POST', url: '/api/v1/key-directory/lookups', headers: s.agent.auth, payload: { labels } });
    expect(many.status).toBe(200);
    expect(new Set(many.body.proofs.map((p: { vrf_proof: string }) => p.vrf_proof)).size).toBe(1);
    const outputs = new Map<string, Uint8Array>();
    const values = [deviceKeysValue({ identity_public_key: agent.keys.identityPublicKey, ephemeral_public_key: agent.keys.ephemeralPublicKey }), signedPrekeyValue(claim.body.signed_prekey), oneTimePrekeyValue(claim.body.one_time_prekey)];
    const verified = verifyKeyLookups(t, undefined, labels.map((l, i) => [l, values[i]!] as const), many.body, { vrfOutputs: outputs });
    expect(verified.versions).toEqual([1, 1, 1]);
    expect(outputs.size).toBe(1);
    const missing = await s.t.request({ method: 'POST', url: '/api/v1/key-directory/lookups', headers: s.agent.auth, payload: { labels: [labels[0], `${labels[1]}-not`] } });
    expect([missing.status, missing.body.detail]).toEqual([404, `key directory label ${labels[1]}-not not found`]);
    const tooMany = await s.t.request({ method: 'POST', url: '/api/v1/key-directory/lookups', headers: s.agent.auth, payload: { labels: Array.from({ length: 17 }, (_, i) => `device/${i}`) } });
    expect(tooMany.status).toBe(400);
    const twice = await s.t.request({ method: 'POST', url: '/api/v1/key-directory/lookups', headers: s.agent.auth, payload: { labels: [labels[0], labels[0]] } });
    expect(twice.status).toBe(400);

    // Publishing the same signed prekey again commits nothing new.
    const size = (await lookup(s.agent.auth, signedPrekeyLabel(agent.deviceId))).checkpoint.tree_size;
    expect((await s.t.request({ method: 'POST', url: '/api/v1/prekeys', headers: agent.auth, payload: { signed_prekey: spk } })).status).toBe(201);
    const again = await lookup(s.agent.auth, signedPrekeyLabel(agent.deviceId));
    expect([again.version, again.checkpoint.tree_size]).toEqual([1, size]);

    // The malicious server swaps the signed prekey it serves.
    const evil = x25519();
    await db().execute(sql`update pq_prekeys set public_key = ${Buffer.from(evil, 'base64')} where device_id = ${agent.deviceId} and kind = 'x25519' and signature is not null`);
    const swapped = await s.t.request({ method: 'POST', url: '/api/v1/prekeys/claim', headers: s.agent.auth, payload: { device_id: agent.deviceId } });
    expect(swapped.body.signed_prekey.public_key).toBe(evil);
    const proof = await lookup(s.agent.auth, signedPrekeyLabel(agent.deviceId));
    expect(codeOf(() => verifyKeyLookup(t, undefined, signedPrekeyLabel(agent.deviceId), signedPrekeyValue(swapped.body.signed_prekey), proof))).toBe('key_mismatch');
  });

  it("refuses a device identity key swapped in the database", async () => {
    const agent = await activeAgent(s.t, s.owner);
    const evil = 'cd'.repeat(32);
    await db().execute(sql`update devices set identity_public_key = ${evil} where id = ${agent.deviceId}`);
    const served = await s.t.request({ method: 'GET', url: `/api/v1/devices/${agent.deviceId}/keys`, headers: s.owner.auth });
    expect(served.body.identity_public_key).toBe(evil);
    const t = await trust(s.owner.auth);
    const proof = await lookup(s.owner.auth, deviceKeysLabel(agent.deviceId));
    expect(codeOf(() => verifyKeyLookup(t, undefined, deviceKeysLabel(agent.deviceId), deviceKeysValue(served.body), proof))).toBe('key_mismatch');
  });

  it('moves a client forward with consistency proofs, and refuses a stale checkpoint and a forked one', async () => {
    const t = await trust(s.owner.auth);
    const label = deviceKeysLabel(s.agent.deviceId);
    const first = await lookup(s.owner.auth, label);
    const accepted = verifyKeyLookup(t, undefined, label, deviceValue(s.agent), first).checkpoint;
    await activeAgent(s.t, s.owner); // the directory grows
    const second = await lookup(s.owner.auth, label, accepted.size);
    expect(second.checkpoint.tree_size).toBeGreaterThan(accepted.size);
    expect(second.consistency.length).toBeGreaterThan(0);
    const newer = verifyKeyLookup(t, accepted, label, deviceValue(s.agent), second).checkpoint;
    // The service answers the older checkpoint again: stale.
    expect(codeOf(() => verifyKeyLookup(t, newer, label, deviceValue(s.agent), first))).toBe('stale_checkpoint');
    // A checkpoint of another tree of the size the client saw, or one that does not extend it: a fork.
    const forkSame: AcceptedCheckpoint = { size: newer.size, root: randomBytes(32) };
    expect(codeOf(() => verifyKeyLookup(t, forkSame, label, deviceValue(s.agent), second))).toBe('inconsistent_checkpoint');
    const forkOlder: AcceptedCheckpoint = { size: accepted.size, root: randomBytes(32) };
    expect(codeOf(() => verifyKeyLookup(t, forkOlder, label, deviceValue(s.agent), second))).toBe('inconsistent_checkpoint');
    // A checkpoint signed by another key than the pinned one.
    const otherKey = { ...t, logKeys: (await trust(s.owner.auth)).logKeys.map((k) => ({ ...k, publicKey: randomBytes(32) })) };
    expect(codeOf(() => verifyKeyLookup(otherKey, undefined, label, deviceValue(s.agent), second))).toBe('bad_signature');
  });

  it('serialises concurrent appends from many transactions into one log', async () => {
    const agents = await Promise.all(Array.from({ length: 6 }, () => activeAgent(s.t, s.owner)));
    const spks = agents.map((a, i) => ({ key_id: `c${i}`, public_key: x25519(), signature: randomBytes(64).toString('base64') }));
    const published = await Promise.all(agents.map((a, i) => s.t.request({ method: 'POST', url: '/api/v1/prekeys', headers: a.auth, payload: { signed_prekey: spks[i], one_time: [{ key_id: `o${i}`, public_key: x25519() }] } })));
    expect(published.map((r) => r.status)).toEqual(agents.map(() => 201));
    const t = await trust(s.owner.auth);
    let last: AcceptedCheckpoint | undefined;
    for (const [i, a] of agents.entries()) {
      const label = signedPrekeyLabel(a.deviceId);
      last = verifyKeyLookup(t, last, label, signedPrekeyValue(spks[i]!), await lookup(s.owner.auth, label, last?.size)).checkpoint;
    }
  });

  it('leaves nothing of a rolled-back transaction that appended twice', async () => {
    const t = await trust(s.owner.auth);
    const label = deviceKeysLabel(s.agent.deviceId);
    const before = verifyKeyLookup(t, undefined, label, deviceValue(s.agent), await lookup(s.owner.auth, label)).checkpoint;
    const directory = s.t.app.parley.keyDirectory;
    const failed = await db()
      .transaction(async (tx) => {
        await directory.publish(tx, [{ label: 'device/00000000-0000-4000-8000-00000000000a', value: new Uint8Array([1]) }]);
        await directory.publish(tx, [{ label: 'device/00000000-0000-4000-8000-00000000000b', value: new Uint8Array([2]) }]);
        throw new Error('rolled back');
      })
      .catch((err: Error) => err.message);
    expect(failed).toBe('rolled back');
    const next = await activeAgent(s.t, s.owner); // a committed append after it
    const after = verifyKeyLookup(t, before, label, deviceValue(s.agent), await lookup(s.owner.auth, label, before.size)).checkpoint;
    verifyKeyLookup(t, after, deviceKeysLabel(next.deviceId), deviceValue(next), await lookup(s.owner.auth, deviceKeysLabel(next.deviceId), after.size));
    expect((await s.t.request({ method: 'GET', url: '/api/v1/key-directory/lookup?label=device/00000000-0000-4000-8000-00000000000a', headers: s.owner.auth })).status).toBe(404);
  });

  it('backfills keys stored before the directory, once: a second run commits nothing', async () => {
    const keys = newDeviceKeys();
    const id = randomUUID();
    await db().execute(sql`insert into devices (id, tenant_id, kind, status, identity_public_key, ephemeral_public_key, fingerprint, name)
      values (${id}, ${s.owner.tenantId}, 'agent', 'ACTIVE', ${keys.identityPublicKey}, ${keys.ephemeralPublicKey}, 'fp', 'stored before the directory')`);
    const label = deviceKeysLabel(id);
    expect((await s.t.request({ method: 'GET', url: `/api/v1/key-directory/lookup?label=${label}`, headers: s.owner.auth })).status).toBe(404);
    const first = await backfillKeyDirectory(db(), s.t.app.parley.keyDirectory);
    expect(first.bindings).toBeGreaterThan(1);
    const proof = await lookup(s.owner.auth, label);
    verifyKeyLookup(await trust(s.owner.auth), undefined, label, deviceKeysValue({ identity_public_key: keys.identityPublicKey, ephemeral_public_key: keys.ephemeralPublicKey }), proof);
    await backfillKeyDirectory(db(), s.t.app.parley.keyDirectory);
    expect((await lookup(s.owner.auth, label)).checkpoint.tree_size).toBe(proof.checkpoint.tree_size);
  });

  it('a second instance loads the table and answers the same checkpoint', async () => {
    const { DirectoryVrf } = await import('../../src/modules/key-directory/vrf-key.js');
    const { KeyDirectory } = await import('../../src/modules/key-directory/service.js');
    const { AuditLogKeys } = await import('../../src/keys/index.js');
    const keys = new AuditLogKeys(db(), s.t.app.parley.secrets, s.t.config.publicUrl);
    await keys.init();
    const fresh = new KeyDirectory(db(), await DirectoryVrf.load(db(), s.t.app.parley.secrets), keys);
    const [theirs, ours] = await Promise.all([fresh.latest(), s.t.app.parley.keyDirectory.latest()]);
    expect(fresh.size).toBeGreaterThan(10);
    expect(theirs.checkpoint).toEqual(ours.checkpoint);
    const label = deviceKeysLabel(s.agent.deviceId);
    verifyKeyLookup(await trust(s.owner.auth), undefined, label, deviceValue(s.agent), await fresh.lookup(label));
  });

  it('serves the entries to an auditor, who replays the prefix roots and the log root without labels or keys', async () => {
    const head = (await s.t.request({ method: 'GET', url: '/api/v1/key-directory/checkpoint' })).body.checkpoint;
    const entries: string[] = [];
    for (let start = 0; start < head.tree_size; ) {
      const page = await s.t.request({ method: 'GET', url: `/api/v1/key-directory/entries?start=${start}&limit=7` });
      expect(page.status).toBe(200);
      entries.push(...page.body.entries);
      start += page.body.entries.length;
    }
    const bytes = entries.slice(0, head.tree_size).map((e) => new Uint8Array(Buffer.from(e, 'base64')));
    // The replay: each entry's prefix root is its update applied to the tree before it.
    let tree = PrefixTree.EMPTY;
    for (const b of bytes) {
      const e = decodeKeyDirectoryEntry(b);
      tree = tree.with(Buffer.from(e.index), e.version, Buffer.from(e.commitment), Buffer.alloc(32));
      expect(Buffer.from(tree.root)).toEqual(Buffer.from(e.prefixRoot));
    }
    expect(referenceRoot(bytes).toString('base64')).toBe(head.root_hash);
    expect(JSON.stringify(entries)).not.toContain(s.agent.deviceId);
    expect((await s.t.request({ method: 'GET', url: `/api/v1/key-directory/entries?start=${head.tree_size + 1000}` })).status).toBe(400);
    expect((await s.t.request({ method: 'GET', url: '/api/v1/key-directory/entries?start=0&limit=1001' })).status).toBe(400);
  });

  it('keeps the log append-only in the database', async () => {
    const refusal = (q: ReturnType<typeof sql>) => db().execute(q).then(() => 'done', (err: Error) => String((err.cause as Error | undefined)?.message ?? err.message));
    expect(await refusal(sql`update key_directory_entries set version = version + 1 where seq = 1`)).toMatch(/append-only/);
    expect(await refusal(sql`delete from key_directory_entries where seq = 1`)).toMatch(/append-only/);
  });

  it('answers 404 for an unknown label, 400 for a size beyond the tree, 401 without credentials; the checkpoint is public', async () => {
    const unknown = await s.t.request({ method: 'GET', url: `/api/v1/key-directory/lookup?label=${deviceKeysLabel('00000000-0000-4000-8000-000000000000')}`, headers: s.owner.auth });
    expect(unknown.status).toBe(404);
    const beyond = await s.t.request({ method: 'GET', url: `/api/v1/key-directory/lookup?label=${deviceKeysLabel(s.agent.deviceId)}&since=99999999`, headers: s.owner.auth });
    expect(beyond.status).toBe(400);
    expect(beyond.body.detail).toMatch(/larger than the directory/);
    expect((await s.t.request({ method: 'GET', url: `/api/v1/key-directory/lookup?label=${deviceKeysLabel(s.agent.deviceId)}` })).status).toBe(401);
    expect((await s.t.request({ method: 'GET', url: '/api/v1/key-directory' })).status).toBe(401);
    const head = await s.t.request({ method: 'GET', url: '/api/v1/key-directory/checkpoint?since=1' });
    expect(head.status).toBe(200);
    expect(head.body.checkpoint.checkpoint).toMatch(/\/keys\n\d+\n/);
  });
});

function codeOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (err instanceof KeyTransparencyError) return err.code;
    throw err;
  }
  return 'accepted';
}

/** A usable X25519 public key in base64 (the service refuses low-order ones). */
function x25519(): string {
  return Buffer.from(generateKeyPairSync('x25519').publicKey.export({ format: 'der', type: 'spki' })).subarray(-32).toString('base64');
}

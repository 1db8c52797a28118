/**
 * Witnessed key directory checkpoints (design §8.39): a real witness (`startWitness`, C2SP
 * tlog-witness) is sent the directory's checkpoints by the publisher (`KEY_DIRECTORY_WITNESSES`),
 * its cosignature (C2SP tlog-cosignature) is stored and served with the checkpoint, the SDK's
 * verifiers accept it, and a tenant's witness policy (`key_transparency_witnesses`,
 * `key_transparency_min_cosignatures`) reaches `GET /key-directory` and makes a client refuse a
 * checkpoint without the cosignature. Plus the 409 resynchronisation, a witness answering a
 * cosignature that does not verify, the settings' validation and the configuration's.
 */
import fs from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { ed25519 } from '@noble/curves/ed25519.js';
import { deviceKeysLabel, deviceKeysValue, type KeyDirectoryInfo } from '@parley/protocol';
import { formatWitnessVkey, KeyTransparencyError, parseWitnessVkey, trustFromInfo, verifyCosignatures, verifyKeyLookup } from '@parley/sdk';
import { startWitness, type RunningWitness } from '@parley/sdk/node';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { WitnessPublisher } from '../../src/modules/key-directory/witnesses.js';
import { startApp, type TestApp } from '../../testing/harness.js';
import { activeAgent, newOwner, type Agent, type Owner } from '../../testing/flows.js';
import { until } from '../../testing/until.js';

const NAME = 'witness.test/w1';

describe('key directory witnesses', () => {
  let t: TestApp;
  let owner: Owner;
  let witness: RunningWitness;
  let publisher: WitnessPublisher;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-witness-'));

  beforeAll(async () => {
    // The app needs the witness's URL and vkey, the witness the app's log key: a first start on a
    // free port gives the URL and creates the key; the witness then restarts there (same data
    // directory, same key) knowing the log.
    const first = await startWitness({ name: NAME, dataDir, logs: [], port: 0 });
    await first.close();
    t = await startApp({
      env: { RATE_LIMIT_ENROLL_PER_10MIN: '1000', KEY_DIRECTORY_WITNESSES: `${first.url}/ ${first.vkey}`, JOB_POLL_INTERVAL_MS: '100', KEY_DIRECTORY_WITNESS_INTERVAL_SECONDS: '3600' },
    });
    owner = await newOwner(t);
    const info = await directoryInfo();
    witness = await startWitness({ name: NAME, dataDir, logs: [{ origin: info.origin, vkey: info.log_keys[0]!.vkey }], port: Number(new URL(first.url).port) });
    expect(witness.vkey).toBe(first.vkey);
    publisher = new WitnessPublisher({ db: t.app.parley.database.db, directory: t.app.parley.keyDirectory, witnesses: t.config.keyDirectoryWitnesses, log: t.app.log, timeoutMs: 5000 });
  });
  afterAll(async () => {
    await t?.close();
    await witness?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const directoryInfo = async (auth = owner.auth): Promise<KeyDirectoryInfo> => {
    const res = await t.request({ method: 'GET', url: '/api/v1/key-directory', headers: auth });
    expect(res.status).toBe(200);
    return res.body;
  };
  const patch = (body: unknown, headers: Record<string, string> = owner.auth) => t.request({ method: 'PATCH', url: '/api/v1/settings', headers, payload: body as object });
  const checkpoint = async () => (await t.request({ method: 'GET', url: '/api/v1/key-directory/checkpoint', headers: owner.auth })).body.checkpoint as { tree_size: number; checkpoint: string };
  const lookupOf = async (a: Agent) => {
    const res = await t.request({ method: 'GET', url: `/api/v1/key-directory/lookup?label=${encodeURIComponent(deviceKeysLabel(a.deviceId))}`, headers: owner.auth });
    expect(res.status).toBe(200);
    return res.body;
  };
  const verifyAgent = async (a: Agent, answer?: Awaited<ReturnType<typeof lookupOf>>) => {
    const value = deviceKeysValue({ identity_public_key: a.keys.identityPublicKey, ephemeral_public_key: a.keys.ephemeralPublicKey });
    return verifyKeyLookup(trustFromInfo(await directoryInfo()), undefined, deviceKeysLabel(a.deviceId), value, answer ?? (await lookupOf(a)));
  };
  const storedSizes = async () =>
    ((await t.app.parley.database.db.execute(sql`select tree_size from key_directory_cosignatures where witness = ${witness.vkey} order by tree_size`)) as unknown as { rows: { tree_size: string | number }[] }).rows.map((r) => Number(r.tree_size));

  it('runs as the cluster job key_directory_witnesses once the app is up', async () => {
    const result = await until('the first witness job run', async () => {
      const res = (await t.app.parley.database.db.execute(sql`select last_result from scheduled_jobs where name = 'key_directory_witnesses'`)) as unknown as { rows: { last_result: Record<string, unknown> | null }[] };
      return res.rows[0]?.last_result ?? undefined;
    });
    expect(result).toMatchObject({ ok: true, witnesses: 1 });
    expect(t.config.keyDirectoryWitnesses).toEqual([{ url: witness.url, vkey: witness.vkey }]);
  });

  it("serves the witness's cosignature with the checkpoint once published, and the SDK verifies it", async () => {
    await activeAgent(t, owner);
    await activeAgent(t, owner);
    const size = (await checkpoint()).tree_size;
    expect(await publisher.publish()).toEqual({ witnesses: 1, cosigned: 1, failed: 0 });
    const cp = await checkpoint();
    expect(cp.tree_size).toBe(size);
    expect(cp.checkpoint).toMatch(new RegExp(`\n\u2014 ${NAME} [A-Za-z0-9+/=]+\n$`));
    const cosigned = verifyCosignatures(cp.checkpoint, [parseWitnessVkey(witness.vkey)]);
    expect(cosigned.map((c) => c.name)).toEqual([NAME]);
    expect(Math.abs(cosigned[0]!.time - Date.now() / 1000)).toBeLessThan(600);
    expect((await storedSizes()).at(-1)).toBe(size);
    // Nothing new: the witness is not asked again.
    expect(await publisher.publish()).toEqual({ witnesses: 1, cosigned: 0, failed: 0 });
  });

  it("serves the tenant's witness policy, and a client holding it refuses a checkpoint the witness has not cosigned yet", async () => {
    expect(await directoryInfo()).toMatchObject({ witnesses: [], min_cosignatures: 0 });
    const set = await patch({ key_transparency_witnesses: [witness.vkey], key_transparency_min_cosignatures: 1 });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({ key_transparency_witnesses: [witness.vkey], key_transparency_min_cosignatures: 1 });
    expect(await directoryInfo()).toMatchObject({ witnesses: [witness.vkey], min_cosignatures: 1 });
    // Another tenant keeps its own (empty) policy.
    const other = await newOwner(t, 'Other');
    expect(await directoryInfo(other.auth)).toMatchObject({ witnesses: [], min_cosignatures: 0 });

    const agent = await activeAgent(t, owner);
    const before = await lookupOf(agent);
    expect(await verifyAgent(agent, before).catch((err: unknown) => (err instanceof KeyTransparencyError ? err.code : err))).toBe('too_few_cosignatures');
    expect((await publisher.publish()).cosigned).toBe(1);
    const { checkpoint: accepted, version } = await verifyAgent(agent);
    expect(version).toBe(1);
    expect(accepted.size).toBe(before.checkpoint.tree_size);
    // Without a required cosignature the same answer verifies again.
    expect((await patch({ key_transparency_min_cosignatures: null })).body.key_transparency_min_cosignatures).toBe(0);
    expect((await verifyAgent(agent, before)).version).toBe(1);
    expect((await patch({ key_transparency_witnesses: null })).body.key_transparency_witnesses).toEqual([]);
  });

  it("resynchronises from a 409: the witness's own last size, then one retry", async () => {
    await t.app.parley.database.db.execute(sql`delete from key_directory_cosignatures where witness = ${witness.vkey}`);
    expect(await publisher.lastSize(witness.vkey)).toBe(0);
    await activeAgent(t, owner);
    expect(await publisher.publish()).toEqual({ witnesses: 1, cosigned: 1, failed: 0 });
    const cp = await checkpoint();
    expect(await storedSizes()).toEqual([cp.tree_size]);
    expect(verifyCosignatures(cp.checkpoint, [parseWitnessVkey(witness.vkey)])).toHaveLength(1);
  });

  it('stores no cosignature that does not verify against the configured vkey, and counts the failure', async () => {
    const impostor = ed25519.utils.randomSecretKey();
    const vkey = formatWitnessVkey('witness.test/fake', ed25519.getPublicKey(ed25519.utils.randomSecretKey()));
    let requests = 0;
    const server: Server = createServer((req, res) => {
      requests++;
      req.resume();
      // Signed by another key than the one configured for this witness name.
      res.end(`\u2014 witness.test/fake ${Buffer.concat([Buffer.alloc(4), Buffer.alloc(8), Buffer.from(ed25519.sign(new Uint8Array(1), impostor))]).toString('base64')}\n`);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const warnings: unknown[] = [];
      const fake = new WitnessPublisher({ db: t.app.parley.database.db, directory: t.app.parley.keyDirectory, witnesses: [{ url, vkey }], log: { warn: (o: unknown) => void warnings.push(o) }, timeoutMs: 5000 });
      expect(await fake.publish()).toEqual({ witnesses: 1, cosigned: 0, failed: 1 });
      expect(requests).toBe(1);
      expect(warnings).toHaveLength(1);
      expect(await fake.lastSize(vkey)).toBe(0);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('refuses a malformed vkey, more cosignatures than witnesses and more than 10 witnesses with 400, and is owner only', async () => {
    const key = parseWitnessVkey(witness.vkey);
    const otherKey = (i: number) => formatWitnessVkey(`witness.test/w${i + 2}`, ed25519.getPublicKey(ed25519.utils.randomSecretKey()));
    const wrongId = witness.vkey.replace(/\+([0-9a-f]{8})\+/, (_, id: string) => `+${id === '00000000' ? '00000001' : '00000000'}+`);
    const bad: unknown[] = [
      { key_transparency_witnesses: ['not a vkey'] },
      { key_transparency_witnesses: [wrongId] },
      { key_transparency_witnesses: [`${key.name}+${witness.vkey.split('+')[1]}+${Buffer.concat([Buffer.of(1), Buffer.from(key.publicKey)]).toString('base64')}`] },
      { key_transparency_witnesses: [witness.vkey, witness.vkey] },
      { key_transparency_witnesses: Array.from({ length: 11 }, (_, i) => otherKey(i)) },
      { key_transparency_min_cosignatures: 1 },
      { key_transparency_witnesses: [witness.vkey], key_transparency_min_cosignatures: 2 },
      { key_transparency_min_cosignatures: 11 },
      { key_transparency_min_cosignatures: -1 },
      { key_transparency_witnesses: witness.vkey },
    ];
    for (const body of bad) expect((await patch(body)).status, JSON.stringify(body)).toBe(400);
    expect((await patch({ key_transparency_witnesses: [wrongId] })).body.detail).toContain('key_transparency_witnesses[0]');
    // Ten witnesses and ten cosignatures are allowed; then removing witnesses below the count required is refused.
    const ten = Array.from({ length: 10 }, (_, i) => otherKey(i));
    expect((await patch({ key_transparency_witnesses: ten, key_transparency_min_cosignatures: 10 })).status).toBe(200);
    const shrink = await patch({ key_transparency_witnesses: ten.slice(0, 9) });
    expect(shrink.status).toBe(400);
    expect(shrink.body.detail).toContain('key_transparency_min_cosignatures');
    expect((await directoryInfo()).witnesses).toEqual(ten);
    expect((await patch({ key_transparency_witnesses: null, key_transparency_min_cosignatures: null })).status).toBe(200);

    expect((await t.request({ method: 'PATCH', url: '/api/v1/settings', payload: { key_transparency_min_cosignatures: 0 } })).status).toBe(401);
    const agent = await activeAgent(t, owner);
    expect((await patch({ key_transparency_min_cosignatures: 0 }, agent.auth)).status).toBe(403);
  });
});

describe('KEY_DIRECTORY_WITNESSES', () => {
  const vkey = formatWitnessVkey('witness.test/a', ed25519.getPublicKey(ed25519.utils.randomSecretKey()));
  const vkey2 = formatWitnessVkey('witness.test/b', ed25519.getPublicKey(ed25519.utils.randomSecretKey()));

  it('parses newline- or comma-separated "<url> <vkey>" entries, default none', () => {
    expect(loadConfig({}).keyDirectoryWitnesses).toEqual([]);
    expect(loadConfig({ KEY_DIRECTORY_WITNESSES: `https://w.example/a/ ${vkey}\n  http://127.0.0.1:7380 ${vkey2} ,` }).keyDirectoryWitnesses).toEqual([
      { url: 'https://w.example/a', vkey },
      { url: 'http://127.0.0.1:7380', vkey: vkey2 },
    ]);
    expect(loadConfig({ KEY_DIRECTORY_WITNESSES: `https://w.example ${vkey}, https://v.example ${vkey2}` }).keyDirectoryWitnesses).toHaveLength(2);
  });

  it('refuses an entry without a URL or a valid vkey, another scheme, and a vkey listed twice', () => {
    const wrongId = vkey.replace(/\+([0-9a-f]{8})\+/, (_, id: string) => `+${id === '00000000' ? '00000001' : '00000000'}+`);
    for (const value of [vkey, `https://w.example`, `https://w.example ${wrongId}`, `ftp://w.example ${vkey}`, `https://w.example ${vkey} extra`, `https://a.example ${vkey}\nhttps://b.example ${vkey}`]) {
      expect(() => loadConfig({ KEY_DIRECTORY_WITNESSES: value }), value).toThrow(ConfigError);
    }
  });
});


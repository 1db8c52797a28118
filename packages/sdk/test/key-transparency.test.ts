/**
 * Key transparency end to end (design §8.39): an owner's devices and an enrolled echo agent, all
 * with the SDK's `SecureMessenger` against a real service, and the service turned malicious
 * (`@parley/server/testing` key-directory fixtures):
 * - honest: sessions start, each on keys verified in the directory, and the last accepted
 *   checkpoint is kept in the device's store;
 * - a peer identity key swapped in the database: no session, a `key_transparency` error, the
 *   owners alerted (socket event, audit event);
 * - a one-time prekey swapped in a claim, under an id that names it (unsigned, so only the
 *   directory can catch it): refused;
 * - a stale checkpoint served after a newer one was accepted: refused;
 * - a `did:hub` document whose owner key was swapped in the database: its resolution fails;
 * - a key added in a device's name (directory and all): the device's own check finds it and the
 *   owners are alerted;
 * - a forked directory (two services sharing the platform keys, each with other entries after a
 *   common history): a client that saw one side refuses the other.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { deviceKeysLabel, deviceKeysValue, type KeyLookups } from '@parley/protocol';
import { activeAgent, forgeKeyDirectoryEntry, newOwner, startApp, swapDeviceKeys, swapHubOwnerKey, swapOneTimePrekeys, type TestApp } from '@parley/server/testing';
import { Resolver } from 'did-resolver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ParleyClient } from '../src/client/rest.js';
import { x25519Keygen, bytesToHex, randomBytes } from '../src/crypto/primitives.js';
import { DeviceIdentity } from '../src/crypto/keys.js';
import { prekeyId } from '../src/crypto/prekeys.js';
import { getResolver } from '../src/did/resolver.js';
import { KeyTransparency, KeyTransparencyError } from '../src/key-transparency/index.js';
import type { EchoAgent } from '../src/node/agent.js';
import { SecureMessengerError } from '../src/secure/types.js';
import { MemorySessionStore } from '../src/storage.js';
import { enrolledEchoAgent } from '../testing/echo-agent.js';
import { ownerSide } from '../testing/owner-side.js';
import { waitFor } from './wait.js';

const alerts = (events: { event: string; data: any }[]) => events.filter((e) => e.event === 'key_directory_alert').map((e) => e.data);

describe('key transparency against a malicious service', () => {
  let t: TestApp;
  let owner: ParleyClient;
  let ownerJwt: string;
  let agent: EchoAgent;
  let laptop: Awaited<ReturnType<typeof ownerSide>>;
  const closers: (() => unknown)[] = [];

  beforeAll(async () => {
    t = await startApp({ listen: true, env: { RATE_LIMIT_DEVICE_STATUS_PER_5S: '100' } });
    ownerJwt = await t.ownerToken(`kt-${Date.now()}@example.com`);
    owner = new ParleyClient({ baseUrl: t.baseUrl, ownerToken: ownerJwt });
    owner.setTenantId((await owner.createTenant({ name: 'KT Co' })).tenant_id);
    laptop = await ownerSide(owner, ownerJwt, t.baseUrl);
    closers.push(() => laptop.rt.close());
    const echo = await enrolledEchoAgent(t.baseUrl, owner, laptop.events, 'parley-kt-');
    agent = echo.agent;
    closers.push(() => echo.stop());
  });
  afterAll(async () => {
    for (const c of closers.reverse()) await c();
    await t?.close();
  });

  /** A new owner device of the same owner (its first session with the agent is still to come). */
  async function phone() {
    const p = await ownerSide(owner, ownerJwt, t.baseUrl);
    closers.push(() => p.rt.close());
    const conversationId = p.od.conversations.find((c) => c.agent_device_id === agent.deviceId)!.conversation_id;
    return { ...p, conversationId };
  }
  const agentKeys = async () => (await owner.listDevices()).devices.find((d) => d.device_id === agent.deviceId)!;

  it('honest service: the session starts on verified keys and the accepted checkpoint is kept in the store', async () => {
    const p = await phone();
    await p.messenger.sendText(p.conversationId, 'hello');
    await waitFor(() => p.received.some((m) => m.content?.type === 'text' && m.content.payload.text === 'echo: hello'), 'the echo', 15_000);
    const saved = JSON.parse((await p.store.load(`key-transparency-secure-${p.od.device_id}`))!);
    expect(saved.last.size).toBeGreaterThan(0);
    expect(saved.info.vrf_public_key).toMatch(/^[0-9a-f]{64}$/);
  });

  it('refuses a peer identity key swapped in the database and alerts the owners', async () => {
    const real = await agentKeys();
    await swapDeviceKeys(t, agent.deviceId, { identity_public_key: bytesToHex(randomBytes(32)) });
    try {
      const p = await phone();
      const err = await p.messenger.sendText(p.conversationId, 'to a forged key').then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(SecureMessengerError);
      expect((err as SecureMessengerError).code).toBe('key_transparency');
      expect((err as Error).message).toMatch(/key transparency: the key served for device\//);
      const alert = await waitFor(() => alerts(laptop.events).find((a) => a.label === deviceKeysLabel(agent.deviceId) && a.reason === 'verification_failed'), 'the alert', 10_000);
      expect(alert.device_id).toBe(p.od.device_id);
      const audit = await owner.listAuditEvents({ type: 'key_directory.alert' });
      expect(audit.events.some((e) => e.subject === deviceKeysLabel(agent.deviceId))).toBe(true);
    } finally {
      await swapDeviceKeys(t, agent.deviceId, { identity_public_key: real.identity_public_key });
    }
  });

  it('refuses a one-time prekey swapped in the claim', async () => {
    // Consistent ids: only the directory can tell these from the agent's own.
    await swapOneTimePrekeys(t, agent.deviceId, () => {
      const publicKey = x25519Keygen().publicKey;
      return { publicKey, keyId: prekeyId(publicKey) };
    });
    const p = await phone();
    const err = await p.messenger.sendText(p.conversationId, 'on a forged one-time prekey').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect([(err as SecureMessengerError).code, (err as Error).message]).toEqual(['key_transparency', expect.any(String)]);
    // A key under a new id: its label is not in the directory at all.
    expect(((err as Error).cause as KeyTransparencyError).code).toBe('not_in_directory');
    expect((err as Error).message).toMatch(/one-time-prekey/);
  });

  it('refuses a stale checkpoint once a newer one was accepted', async () => {
    const label = deviceKeysLabel(agent.deviceId);
    const value = deviceKeysValue(await agentKeys());
    const old: KeyLookups = await owner.keyDirectoryLookups({ labels: [label] });
    await activeAgent(t, await newOwner(t)); // the directory grows
    let replay = false;
    const reports: string[] = [];
    const client = {
      keyDirectoryInfo: () => owner.keyDirectoryInfo(),
      keyDirectoryLookups: async (q: { labels: string[]; since?: number }) => (replay ? old : owner.keyDirectoryLookups(q)),
      reportKeyDirectory: async (b: { label: string; reason: 'verification_failed' | 'unpublished_key'; detail: string }) => {
        reports.push(b.detail);
        return owner.reportKeyDirectory(b, { deviceId: laptop.od.device_id });
      },
    } as unknown as ConstructorParameters<typeof KeyTransparency>[0];
    const kt = new KeyTransparency(client, { store: new MemorySessionStore() });
    await kt.verify(label, value);
    replay = true;
    const other = deviceKeysValue({ identity_public_key: bytesToHex(randomBytes(32)), ephemeral_public_key: bytesToHex(randomBytes(32)) });
    const err = await kt.verify(label, other).catch((e: unknown) => e);
    expect((err as KeyTransparencyError).code).toBe('stale_checkpoint');
    expect(reports.at(-1)).toMatch(/older than the one of size/);
  });

  it('checks did:hub documents: the registered keys resolve, an owner key swapped in the database does not', async () => {
    const pub = Buffer.from(DeviceIdentity.generate().identityPublicKey).toString('base64');
    const address = `kt-${Date.now().toString(36)}`;
    await owner.registerHub({ hub_address: address, display_name: 'KT agent', public_key: pub });
    const kt = new KeyTransparency(owner, { store: new MemorySessionStore(), deviceId: laptop.od.device_id });
    const resolver = new Resolver(getResolver({ baseUrl: t.baseUrl, keyTransparency: kt }));
    const good = await resolver.resolve(`did:hub:${address}`);
    expect(good.didResolutionMetadata.error).toBeUndefined();
    expect(good.didDocument?.verificationMethod).toHaveLength(1);
    await swapHubOwnerKey(t, address, Buffer.from(DeviceIdentity.generate().identityPublicKey).toString('base64'));
    const forged = await resolver.resolve(`did:hub:${address}`);
    expect(forged.didResolutionMetadata.error).toBe('invalidPublicKey');
    expect(forged.didResolutionMetadata.message).toMatch(/^key transparency: /);
  });

  it("finds a key added in a device's own name and alerts the owners", async () => {
    const before = alerts(laptop.events).length;
    expect(await laptop.messenger.checkOwnKeys()).toEqual([]);
    await forgeKeyDirectoryEntry(t, deviceKeysLabel(laptop.od.device_id), deviceKeysValue({ identity_public_key: bytesToHex(randomBytes(32)), ephemeral_public_key: bytesToHex(randomBytes(32)) }));
    const found = await laptop.messenger.checkOwnKeys();
    expect(found.map((e) => e.code)).toEqual(['key_transparency']);
    const alert = await waitFor(() => alerts(laptop.events).slice(before).find((a) => a.reason === 'unpublished_key'), 'the unpublished-key alert', 10_000);
    expect(alert.label).toBe(deviceKeysLabel(laptop.od.device_id));
  });
});

describe('key transparency: a forked directory', () => {
  const dirs: string[] = [];
  const apps: TestApp[] = [];
  afterAll(async () => {
    for (const a of apps) await a.close();
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  it('a client that accepted one side of a fork refuses the other', async () => {
    // A common history, then two services on copies of it: the same platform keys, other entries.
    const common = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-kt-fork-'));
    dirs.push(common);
    let t = await startApp({ dataDir: common, listen: true });
    const o = await newOwner(t);
    const shared = await activeAgent(t, o);
    await t.close();
    const copy = `${common}-b`;
    dirs.push(copy);
    fs.cpSync(common, copy, { recursive: true });
    t = await startApp({ dataDir: common, listen: true });
    const u = await startApp({ dataDir: copy, listen: true });
    apps.push(t, u);
    await activeAgent(t, o);
    await activeAgent(u, o);
    await activeAgent(u, o);

    let target = t;
    const call = () => new ParleyClient({ baseUrl: target.baseUrl, ownerToken: o.token, tenantId: o.tenantId });
    const client = {
      keyDirectoryInfo: () => call().keyDirectoryInfo(),
      keyDirectoryLookups: (q: { labels: string[]; since?: number }) => call().keyDirectoryLookups(q),
      reportKeyDirectory: async () => ({ accepted: true as const }),
    } as unknown as ConstructorParameters<typeof KeyTransparency>[0];
    const kt = new KeyTransparency(client, { store: new MemorySessionStore() });
    const label = deviceKeysLabel(shared.deviceId);
    const value = deviceKeysValue({ identity_public_key: shared.keys.identityPublicKey, ephemeral_public_key: shared.keys.ephemeralPublicKey });
    await kt.verify(label, value); // one side
    target = u; // the service shows this client the other side
    const fresh = new KeyTransparency(client, { store: new MemorySessionStore() });
    await fresh.verify(label, value); // alone, the other side looks fine
    const err = await kt.verify(label, new Uint8Array([...value, 0x20])).catch((e: unknown) => e);
    expect((err as KeyTransparencyError).code).toBe('inconsistent_checkpoint');
    expect((err as Error).message).toMatch(/a forked directory/);
  });
});

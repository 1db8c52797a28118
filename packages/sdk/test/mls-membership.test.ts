/**
 * Membership of a 1:1 MLS group (RFC 9420): with a roster (`groupRoster`), a device refuses
 * Welcomes, commits and proposals that would add a third device, remove a member or swap a
 * member's identity, and keeps its state; self-updates still go through. The malicious peer is an
 * MlsClient or a client written directly against ts-mls; the third device's identity key is
 * accepted by `validateCredential` (as when it is the peer of another conversation), so only the
 * roster stops it.
 */
import { describe, expect, it } from 'vitest';
import {
  createCommit,
  createProposal,
  decodeMlsMessage,
  defaultCapabilities,
  defaultLifetime,
  emptyPskIndex,
  encodeMlsMessage,
  generateKeyPackage,
  getCiphersuiteFromName,
  getCiphersuiteImpl,
  joinGroup,
  type ClientState,
  type CiphersuiteImpl,
  type LeafNodeUpdate,
  type MLSMessage,
  type Proposal,
} from 'ts-mls';
import { encodeLeafNodeTBS } from 'ts-mls/leafNode.js';
import { signWithLabel } from 'ts-mls/crypto/signature.js';
import type { ParleyClient } from '../src/client/rest.js';
import { DeviceIdentity } from '../src/crypto/keys.js';
import { base64ToBytes } from '../src/mls/base64.js';
import { hexToBytes } from '../src/crypto/primitives.js';
import { MLS_CIPHERSUITE, MlsClient, MlsClientError, encodeMlsEnvelope, type MlsRosterMember, type MlsWireFields } from '../src/mls/index.js';
import { SecureMessenger } from '../src/secure/messenger.js';
import { MemorySessionStore } from '../src/storage.js';

const enc = new TextEncoder();
const dec = new TextDecoder();
const GROUP = 'parley:conv-ab:1';

async function expectCode(p: Promise<unknown>, code: string): Promise<MlsClientError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(MlsClientError);
  expect((err as MlsClientError).code).toBe(code);
  return err as MlsClientError;
}

async function oneKeyPackage(c: MlsClient): Promise<Uint8Array> {
  const [kp] = await c.generateKeyPackages(1);
  return kp!;
}

/** Registered identity keys; `validateCredential` accepts any of them (not group-aware). */
function registry() {
  const keys = new Map<string, Uint8Array>();
  const validateCredential = (id: string, key: Uint8Array) => {
    const k = keys.get(id);
    return k !== undefined && k.length === key.length && k.every((x, i) => x === key[i]);
  };
  return { keys, validateCredential };
}

/**
 * Alice, whose groups `GROUP` and `parley:conv-ab:*` have the roster {alice, bob}, and a third
 * registered device carol (the peer of another of alice's conversations).
 */
async function setup() {
  const reg = registry();
  const roster: MlsRosterMember[] = [];
  const alice = await MlsClient.create({
    deviceId: 'alice',
    validateCredential: reg.validateCredential,
    groupRoster: (groupId) => (groupId.startsWith('parley:conv-ab:') ? roster : undefined),
  });
  const carol = await MlsClient.create({ deviceId: 'carol', validateCredential: reg.validateCredential });
  reg.keys.set('alice', alice.signaturePublicKey);
  reg.keys.set('carol', carol.signaturePublicKey);
  roster.push({ deviceId: 'alice', signaturePublicKey: alice.signaturePublicKey });
  const registerBob = (key: Uint8Array) => {
    reg.keys.set('bob', key);
    roster.push({ deviceId: 'bob', signaturePublicKey: key });
  };
  return { reg, alice, carol, registerBob };
}

/** Alice and an MlsClient bob in the two-member group `GROUP`. */
async function pairWithClient() {
  const s = await setup();
  const bob = await MlsClient.create({ deviceId: 'bob', validateCredential: s.reg.validateCredential });
  s.registerBob(bob.signaturePublicKey);
  await s.alice.createGroup(GROUP);
  await bob.joinFromWelcome((await s.alice.addMembers(GROUP, [await oneKeyPackage(bob)])).welcome);
  return { ...s, bob };
}

/** Alice and a bob written directly against ts-mls (it can craft any proposal) in `GROUP`. */
async function pairWithRawPeer() {
  const s = await setup();
  const impl = await getCiphersuiteImpl(getCiphersuiteFromName(MLS_CIPHERSUITE));
  const kp = await generateKeyPackage({ credentialType: 'basic', identity: enc.encode('bob') }, defaultCapabilities(), defaultLifetime, [], impl);
  s.registerBob(kp.publicPackage.leafNode.signaturePublicKey);
  await s.alice.createGroup(GROUP);
  const add = await s.alice.addMembers(GROUP, [encodeMlsMessage({ version: 'mls10', wireformat: 'mls_key_package', keyPackage: kp.publicPackage })]);
  const w = decodeMlsMessage(add.welcome, 0)![0];
  if (w.wireformat !== 'mls_welcome') throw new Error('expected a Welcome');
  const bob = await joinGroup(w.welcome, kp.publicPackage, kp.privatePackage, emptyPskIndex, impl);
  return { ...s, impl, bob };
}

const bytesOf = (m: MLSMessage) => encodeMlsMessage(m);

async function proposalBytes(state: ClientState, proposal: Proposal, impl: CiphersuiteImpl): Promise<Uint8Array> {
  return bytesOf((await createProposal(state, false, proposal, impl)).message);
}

async function commitBytes(state: ClientState, proposals: Proposal[], impl: CiphersuiteImpl): Promise<Uint8Array> {
  return bytesOf((await createCommit({ state, cipherSuite: impl }, { extraProposals: proposals })).commit);
}

/** An Update leaf for `leafIndex` of `groupId` naming `deviceId`, signed with `signKey` (RFC 9420 §7.2). */
async function updateLeaf(
  base: { hpkePublicKey: Uint8Array; signaturePublicKey: Uint8Array; capabilities: LeafNodeUpdate['capabilities'] },
  deviceId: string,
  signKey: Uint8Array,
  groupId: string,
  leafIndex: number,
  impl: CiphersuiteImpl,
): Promise<LeafNodeUpdate> {
  const data = { ...base, credential: { credentialType: 'basic' as const, identity: enc.encode(deviceId) }, leafNodeSource: 'update' as const, extensions: [] };
  const tbs = encodeLeafNodeTBS({ ...data, groupId: enc.encode(groupId), leafIndex });
  return { ...data, signature: await signWithLabel(signKey, 'LeafNodeTBS', tbs, impl.signature) };
}

describe('MLS membership of a 1:1 group (roster)', () => {
  it("refuses the peer's commit adding a third device, keeps its state, and reads nothing of the third device", async () => {
    const { alice, bob, carol } = await pairWithClient();
    const before = alice.exportState();
    const add = await bob.addMembers(GROUP, [await oneKeyPackage(carol)]);

    const err = await expectCode(alice.processMessage(GROUP, add.commit), 'membership_refused');
    expect(err.message).toContain('carol');
    expect(alice.exportState()).toBe(before);
    expect(alice.epoch(GROUP)).toBe(1n);
    expect(alice.memberIds(GROUP)).toEqual(['alice', 'bob']);

    // Carol joined bob's epoch: her messages are of an epoch alice never enters.
    await carol.joinFromWelcome(add.welcome);
    await expectCode(alice.processMessage(GROUP, await carol.encrypt(GROUP, 'hello from carol')), 'epoch_ahead');
    await expectCode(alice.processMessage(GROUP, add.commit), 'membership_refused');
    expect(alice.exportState()).toBe(before);
  });

  it('refuses a Welcome whose tree holds a third member, and keeps its KeyPackage', async () => {
    const { alice, carol, reg, registerBob } = await setup();
    const bob = await MlsClient.create({ deviceId: 'bob', validateCredential: reg.validateCredential });
    registerBob(bob.signaturePublicKey);
    await bob.createGroup('parley:conv-ab:2');
    const add = await bob.addMembers('parley:conv-ab:2', [await oneKeyPackage(alice), await oneKeyPackage(carol)]);

    const err = await expectCode(alice.joinFromWelcome(add.welcome), 'membership_refused');
    expect(err.message).toContain('carol');
    expect(alice.hasGroup('parley:conv-ab:2')).toBe(false);
    expect(alice.keyPackageCount()).toBe(1);
  });

  it("refuses the peer's proposal to remove itself and its commit removing us", async () => {
    const { alice, bob, impl } = await pairWithRawPeer();
    const before = alice.exportState();
    await expectCode(alice.processMessage(GROUP, await proposalBytes(bob, { proposalType: 'remove', remove: { removed: 1 } }, impl)), 'membership_refused');
    await expectCode(alice.processMessage(GROUP, await commitBytes(bob, [{ proposalType: 'remove', remove: { removed: 0 } }], impl)), 'membership_refused');
    expect(alice.exportState()).toBe(before);
    expect(alice.isActive(GROUP)).toBe(true);
  });

  it("refuses an Update that swaps the peer's leaf to another registered identity", async () => {
    const { alice, bob, impl } = await pairWithRawPeer();
    // Carol's own key signs the leaf (she colludes); the proposal itself is bob's.
    const carolKp = await generateKeyPackage({ credentialType: 'basic', identity: enc.encode('carol') }, defaultCapabilities(), defaultLifetime, [], impl);
    const leaf = await updateLeaf(carolKp.publicPackage.leafNode, 'carol', carolKp.privatePackage.signaturePrivateKey, GROUP, 1, impl);
    const before = alice.exportState();
    const err = await expectCode(alice.processMessage(GROUP, await proposalBytes(bob, { proposalType: 'update', update: { leafNode: leaf } }, impl)), 'membership_refused');
    expect(err.message).toContain('bob');
    expect(alice.exportState()).toBe(before);
  });

  it('accepts self-updates (same device and key, fresh HPKE keys) both ways', async () => {
    const { alice, bob } = await pairWithClient();
    const fromBob = await bob.updateKeys(GROUP);
    expect(await alice.processMessage(GROUP, fromBob.commit)).toMatchObject({ kind: 'commit', sender: 'bob', added: [], removed: [], members: ['alice', 'bob'] });
    const fromAlice = await alice.updateKeys(GROUP);
    expect(await bob.processMessage(GROUP, fromAlice.commit)).toMatchObject({ kind: 'commit', sender: 'alice', members: ['alice', 'bob'] });
    const r = await alice.processMessage(GROUP, await bob.encrypt(GROUP, 'still two'));
    expect(r.kind === 'application' && dec.decode(r.plaintext)).toBe('still two');
    expect(alice.epoch(GROUP)).toBe(3n);
  });

  it('refuses to create or extend a rostered group beyond its roster', async () => {
    const { alice, carol } = await pairWithClient();
    await expectCode(alice.addMembers(GROUP, [await oneKeyPackage(carol)]), 'membership_refused');
    expect(alice.epoch(GROUP)).toBe(1n);
    await expectCode(alice.removeMember(GROUP, 'bob'), 'membership_refused');
    expect(alice.memberIds(GROUP)).toEqual(['alice', 'bob']);
  });
});

describe('SecureMessenger: the roster of a conversation group is this device and its peer', () => {
  const uuid = () => globalThis.crypto.randomUUID();

  /** An MlsClient signing with a device's identity key, as a messenger's does. */
  function mlsOf(identity: DeviceIdentity): Promise<MlsClient> {
    const signKey = hexToBytes(identity.toJSON().identity_secret_key);
    return MlsClient.create({ deviceId: identity.deviceId!, signatureKeyPair: { publicKey: identity.identityPublicKey, signKey } });
  }

  const peerOf = (d: DeviceIdentity) => ({ device_id: d.deviceId!, identity_public_key: d.identityPublicKeyHex, ephemeral_public_key: d.ephemeralPublicKeyHex });

  it("refuses the peer's commit adding the peer of another conversation, and that device's messages", async () => {
    const published: string[] = [];
    const client = {
      keyPackageCount: async (deviceId: string) => ({ device_id: deviceId, available: published.length }),
      publishKeyPackages: async (body: { key_packages: string[] }) => {
        published.push(...body.key_packages);
        return { published: body.key_packages.length, available: published.length };
      },
    } as unknown as ParleyClient;
    const aliceId = DeviceIdentity.generate(uuid());
    const alice = await SecureMessenger.open({ identity: aliceId, store: new MemorySessionStore(), client, mls: true });
    const errors: Error[] = [];
    alice.on('error', (e) => void errors.push(e));
    await alice.start();
    const bobId = DeviceIdentity.generate(uuid());
    const carolId = DeviceIdentity.generate(uuid());
    const [ab, ac] = [uuid(), uuid()];
    await alice.addConversation(ab, peerOf(bobId));
    await alice.addConversation(ac, peerOf(carolId));
    let cursor = 0;
    const deliver = (from: DeviceIdentity, wire: MlsWireFields) =>
      alice.receive({
        message_id: uuid(),
        conversation_id: ab,
        sender_device_id: from.deviceId!,
        ...wire,
        timestamp: new Date().toISOString(),
        cursor: String(++cursor),
        message_type: 'text',
        priority: 'normal',
      });

    // Bob (malicious) opens the 1:1 group with alice's published KeyPackage: accepted.
    const bob = await mlsOf(bobId);
    const groupId = `parley:${ab}:${uuid()}`;
    await bob.createGroup(groupId);
    const joined = await bob.addMembers(groupId, [base64ToBytes(published[0]!)]);
    await deliver(bobId, encodeMlsEnvelope({ groupId, kind: 'welcome', epoch: joined.epoch, message: joined.welcome }));
    expect(errors).toEqual([]);
    expect(alice.sessionInfo(ab)).toMatchObject({ protocol: 'mls', initiator: 'peer' });

    // Then adds carol, whom alice knows from another conversation.
    const carol = await mlsOf(carolId);
    const add = await bob.addMembers(groupId, [await oneKeyPackage(carol)]);
    await deliver(bobId, encodeMlsEnvelope({ groupId, kind: 'commit', epoch: add.commitEpoch, message: add.commit }));
    expect(errors).toHaveLength(1);
    expect((errors[0]!.cause as MlsClientError).code).toBe('membership_refused');

    await carol.joinFromWelcome(add.welcome);
    await deliver(carolId, encodeMlsEnvelope({ groupId, kind: 'application', epoch: add.epoch, message: await carol.encrypt(groupId, 'hi') }));
    expect(errors).toHaveLength(2);
    expect(alice.pendingCount).toBe(0);
    await alice.close();
  });
});

/**
 * MLS client, in process (no server): the bytes each client produces are handed directly to the
 * others, as the relay would after base64 round trips.
 */
import { describe, expect, it, vi } from 'vitest';
import {
  createApplicationMessage,
  createCommit,
  createGroup,
  decodeMlsMessage,
  defaultCapabilities,
  defaultLifetime,
  emptyPskIndex,
  encodeMlsMessage,
  generateKeyPackage,
  getCiphersuiteFromName,
  getCiphersuiteImpl,
  joinGroup,
  processPrivateMessage,
  type ClientState,
  type Credential,
} from 'ts-mls';
import {
  MLS_CIPHERSUITE,
  MlsClient,
  MlsClientError,
  decodeMlsEnvelope,
  decodeMlsHeader,
  encodeMlsEnvelope,
  inspectKeyPackage,
  inspectMlsMessage,
  isMlsHeaderBlob,
  selectProtocol,
  type MlsProcessResult,
} from '../src/mls/index.js';
import { MemorySessionStore } from '../src/storage.js';

const enc = new TextEncoder();
const dec = new TextDecoder();

async function client(deviceId: string, extra: Partial<Parameters<typeof MlsClient.create>[0]> = {}): Promise<MlsClient> {
  return MlsClient.create({ deviceId, ...extra });
}

async function oneKeyPackage(c: MlsClient): Promise<Uint8Array> {
  const [kp] = await c.generateKeyPackages(1);
  return kp!;
}

function application(r: MlsProcessResult): Extract<MlsProcessResult, { kind: 'application' }> {
  if (r.kind !== 'application') throw new Error(`expected application, got ${r.kind}`);
  return r;
}

function commitResult(r: MlsProcessResult): Extract<MlsProcessResult, { kind: 'commit' }> {
  if (r.kind !== 'commit') throw new Error(`expected commit, got ${r.kind}`);
  return r;
}

async function expectCode(p: Promise<unknown>, code: string): Promise<void> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(MlsClientError);
  expect((err as MlsClientError).code).toBe(code);
}

/** Sends from `from` to every client in `to`, checking each decrypts it and sees the right sender. */
async function broadcast(groupId: string, from: MlsClient, to: MlsClient[], text: string): Promise<void> {
  const ct = await from.encrypt(groupId, text);
  for (const c of to) {
    const r = application(await c.processMessage(groupId, ct));
    expect(dec.decode(r.plaintext)).toBe(text);
    expect(r.sender).toBe(from.deviceId);
  }
}

describe('selectProtocol', () => {
  it('uses MLS only when both ends support it', () => {
    expect(selectProtocol(true, true)).toBe('mls');
    expect(selectProtocol(true, false)).toBe('x3dh-dr');
    expect(selectProtocol(false, true)).toBe('x3dh-dr');
    expect(selectProtocol(false, false)).toBe('x3dh-dr');
  });
});

describe('MlsClient', () => {
  it('two-party group: create, add, welcome, messages both ways', async () => {
    const alice = await client('alice-device');
    const bob = await client('bob-device');
    const bobKps = await bob.generateKeyPackages(3);
    expect(bobKps).toHaveLength(3);
    expect(bob.keyPackageCount()).toBe(3);
    expect(alice.ciphersuite).toBe('MLS_128_DHKEMX25519_CHACHA20POLY1305_SHA256_Ed25519');

    const info = await inspectKeyPackage(bobKps[1]!);
    expect(info.deviceId).toBe('bob-device');
    expect(info.cipherSuite).toBe(MLS_CIPHERSUITE);
    expect(info.signaturePublicKey).toEqual(bob.signaturePublicKey);

    await alice.createGroup('conv-1');
    expect(alice.epoch('conv-1')).toBe(0n);
    expect(alice.memberIds('conv-1')).toEqual(['alice-device']);

    const add = await alice.addMembers('conv-1', [bobKps[1]!]);
    expect(add.added).toEqual(['bob-device']);
    expect(add.commitEpoch).toBe(0n);
    expect(add.epoch).toBe(1n);
    expect(alice.epoch('conv-1')).toBe(1n);
    expect(inspectMlsMessage(add.commit)).toMatchObject({ wireformat: 'private_message', contentType: 'commit', groupId: 'conv-1', epoch: 0n });
    expect(inspectMlsMessage(add.welcome)).toEqual({ wireformat: 'welcome' });

    const joined = await bob.joinFromWelcome(add.welcome);
    expect(joined).toEqual({ groupId: 'conv-1', epoch: 1n, members: ['alice-device', 'bob-device'] });
    expect(bob.keyPackageCount()).toBe(2); // the used KeyPackage is gone
    expect(bob.members('conv-1').map((m) => m.deviceId)).toEqual(['alice-device', 'bob-device']);

    await broadcast('conv-1', alice, [bob], 'hello bob');
    await broadcast('conv-1', bob, [alice], 'hello alice');
    await broadcast('conv-1', bob, [alice], 'second from bob');

    // Bytes in, bytes out.
    const bin = new Uint8Array([0, 1, 2, 255, 254]);
    const r = application(await alice.processMessage('conv-1', await bob.encrypt('conv-1', bin)));
    expect(r.plaintext).toEqual(bin);
    expect(r.epoch).toBe(1n);

    // The same Welcome cannot be used twice (its KeyPackage is consumed).
    await expectCode(bob.joinFromWelcome(add.welcome), 'no_matching_key_package');
    // A replayed application message is refused (its key was deleted after first use).
    const once = await alice.encrypt('conv-1', 'once');
    application(await bob.processMessage('conv-1', once));
    await expectCode(bob.processMessage('conv-1', once), 'rejected_message');
  });

  it('three-party group, then a member added later sees only later traffic', async () => {
    const [a, b, c, d] = await Promise.all(['a', 'b', 'c', 'd'].map((id) => client(id)));
    await a!.createGroup('room');
    const add = await a!.addMembers('room', [await oneKeyPackage(b!), await oneKeyPackage(c!)]);
    expect(add.added).toEqual(['b', 'c']);
    // One Welcome serves every added device.
    await b!.joinFromWelcome(add.welcome);
    await c!.joinFromWelcome(add.welcome);
    for (const x of [a, b, c]) expect(x!.memberIds('room')).toEqual(['a', 'b', 'c']);

    await broadcast('room', a!, [b!, c!], 'from a');
    await broadcast('room', b!, [a!, c!], 'from b');
    await broadcast('room', c!, [a!, b!], 'from c');

    const before = await a!.encrypt('room', 'before d joined');

    // b adds d; a and c process the commit.
    const addD = await b!.addMembers('room', [await oneKeyPackage(d!)]);
    for (const x of [a!, c!]) {
      const r = commitResult(await x.processMessage('room', addD.commit));
      expect(r).toMatchObject({ sender: 'b', added: ['d'], removed: [], selfRemoved: false, epoch: 2n });
      expect(r.members).toEqual(['a', 'b', 'c', 'd']);
    }
    const joined = await d!.joinFromWelcome(addD.welcome);
    expect(joined.epoch).toBe(2n);
    expect(joined.members).toEqual(['a', 'b', 'c', 'd']);

    await broadcast('room', d!, [a!, b!, c!], 'hi from d');
    await broadcast('room', a!, [b!, c!, d!], 'welcome d');

    // d has no keys for the epoch before it joined.
    await expectCode(d!.processMessage('room', before), 'epoch_too_old');
    // The others still read the late-delivered message of the previous epoch.
    expect(dec.decode(application(await c!.processMessage('room', before)).plaintext)).toBe('before d joined');
  });

  it('a removed member cannot decrypt later application messages', async () => {
    const [a, b, c] = await Promise.all(['a', 'b', 'c'].map((id) => client(id)));
    await a!.createGroup('g');
    const add = await a!.addMembers('g', [await oneKeyPackage(b!), await oneKeyPackage(c!)]);
    await b!.joinFromWelcome(add.welcome);
    await c!.joinFromWelcome(add.welcome);
    await broadcast('g', a!, [b!, c!], 'all three');

    const rm = await a!.removeMember('g', 'c');
    expect(rm.removed).toEqual(['c']);
    expect(a!.memberIds('g')).toEqual(['a', 'b']);
    expect(commitResult(await b!.processMessage('g', rm.commit))).toMatchObject({ removed: ['c'], selfRemoved: false, members: ['a', 'b'] });

    const secret = await a!.encrypt('g', 'c must not read this');
    const secretFromB = await b!.encrypt('g', 'nor this');
    expect(dec.decode(application(await b!.processMessage('g', secret)).plaintext)).toBe('c must not read this');

    // c without the removal commit: the message is from an epoch c never reaches.
    await expectCode(c!.processMessage('g', secret), 'epoch_ahead');
    // c processes its removal, and is then out for good.
    const r = commitResult(await c!.processMessage('g', rm.commit));
    expect(r.selfRemoved).toBe(true);
    expect(r.removed).toEqual(['c']);
    expect(c!.isActive('g')).toBe(false);
    await expectCode(c!.processMessage('g', secret), 'inactive_group');
    await expectCode(c!.processMessage('g', secretFromB), 'inactive_group');
    await expectCode(c!.encrypt('g', 'still here?'), 'inactive_group');

    // The remaining members carry on.
    await broadcast('g', b!, [a!], 'two of us');
    await expectCode(a!.removeMember('g', 'c'), 'not_member');
    await expectCode(a!.removeMember('g', 'a'), 'cannot_remove_self');
    await c!.deleteGroup('g');
    expect(c!.hasGroup('g')).toBe(false);
  });

  it('key update commit keeps the group working', async () => {
    const [a, b] = await Promise.all(['a', 'b'].map((id) => client(id)));
    await a!.createGroup('g');
    await b!.joinFromWelcome((await a!.addMembers('g', [await oneKeyPackage(b!)])).welcome);
    const upd = await b!.updateKeys('g');
    expect(commitResult(await a!.processMessage('g', upd.commit))).toMatchObject({ sender: 'b', added: [], removed: [], epoch: 2n });
    await broadcast('g', a!, [b!], 'after update');
  });

  it('exported/imported state keeps working (groups and unused KeyPackages)', async () => {
    const store = new MemorySessionStore();
    let alice = await client('alice', { store });
    let bob = await client('bob', { store });
    const carolStore = new MemorySessionStore();
    let carol = await client('carol', { store: carolStore });
    const carolKp = await oneKeyPackage(carol);

    await alice.createGroup('g');
    await bob.joinFromWelcome((await alice.addMembers('g', [await oneKeyPackage(bob)])).welcome);
    await broadcast('g', alice, [bob], 'before restart');

    // Restart everyone from the store.
    alice = (await MlsClient.load(store, 'alice'))!;
    bob = (await MlsClient.load(store, 'bob'))!;
    carol = (await MlsClient.load(carolStore, 'carol'))!;
    expect(alice).toBeDefined();
    expect(await MlsClient.load(store, 'nobody')).toBeUndefined();
    expect(bob.epoch('g')).toBe(1n);
    expect(carol.keyPackageCount()).toBe(1);

    await broadcast('g', bob, [alice], 'after restart');
    await broadcast('g', alice, [bob], 'and back');

    // A KeyPackage published before the restart still opens its Welcome.
    const add = await alice.addMembers('g', [carolKp]);
    commitResult(await bob.processMessage('g', add.commit));
    await carol.joinFromWelcome(add.welcome);
    await broadcast('g', carol, [alice, bob], 'carol restored');

    // exportState/importState without a store.
    const exported = bob.exportState();
    const bob2 = await MlsClient.importState(exported);
    expect(bob2.deviceId).toBe('bob');
    expect(bob2.signaturePublicKey).toEqual(bob.signaturePublicKey);
    await broadcast('g', alice, [bob2], 'to the imported copy');

    // Forward secrecy across persistence: the saved state no longer decrypts a processed message.
    const ct = await alice.encrypt('g', 'read once');
    application(await carol.processMessage('g', ct));
    const carol2 = (await MlsClient.load(carolStore, 'carol'))!;
    await expectCode(carol2.processMessage('g', ct), 'rejected_message');

    await expectCode(MlsClient.importState('{"format":"other"}'), 'invalid_state');
    await expectCode(MlsClient.importState('not json'), 'invalid_state');
  });

  it('tampered or misrouted ciphertext is refused and leaves the state usable', async () => {
    const [a, b] = await Promise.all(['a', 'b'].map((id) => client(id)));
    await a!.createGroup('g');
    await a!.createGroup('other');
    await b!.joinFromWelcome((await a!.addMembers('g', [await oneKeyPackage(b!)])).welcome);

    const ct = await a!.encrypt('g', 'authentic');
    // Flip one bit in each of the last 16 bytes (AEAD tag and body) and in the middle.
    for (const idx of [ct.length - 1, ct.length - 8, ct.length - 20, Math.floor(ct.length / 2)]) {
      const bad = ct.slice();
      bad[idx]! ^= 0x01;
      const err = await b!.processMessage('g', bad).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(MlsClientError);
      expect(['rejected_message', 'malformed_message']).toContain((err as MlsClientError).code);
    }
    await expectCode(b!.processMessage('g', ct.slice(0, ct.length - 1)), 'malformed_message');
    await expectCode(b!.processMessage('g', new Uint8Array([1, 2, 3])), 'malformed_message');
    // Not for this group.
    await expectCode(a!.processMessage('other', ct), 'wrong_group');
    await expectCode(b!.processMessage('nope', ct), 'unknown_group');

    // The untouched message still decrypts afterwards.
    expect(dec.decode(application(await b!.processMessage('g', ct)).plaintext)).toBe('authentic');

    // A tampered commit is refused too, and the real one still applies.
    const c = await b!.updateKeys('g');
    const badCommit = c.commit.slice();
    badCommit[badCommit.length - 3]! ^= 0x80;
    await expectCode(a!.processMessage('g', badCommit), 'rejected_message');
    expect(a!.epoch('g')).toBe(1n);
    commitResult(await a!.processMessage('g', c.commit));
    expect(a!.epoch('g')).toBe(2n);

    // A tampered Welcome is refused.
    const d = await client('d');
    const addD = await a!.addMembers('g', [await oneKeyPackage(d)]);
    const badWelcome = addD.welcome.slice();
    badWelcome[badWelcome.length - 5]! ^= 0x01;
    await expect(d.joinFromWelcome(badWelcome)).rejects.toBeInstanceOf(MlsClientError);
    expect((await d.joinFromWelcome(addD.welcome)).epoch).toBe(3n);
  });

  it('refuses bad KeyPackages and duplicate members', async () => {
    const [a, b] = await Promise.all(['a', 'b'].map((id) => client(id)));
    await a!.createGroup('g');
    const kp = await oneKeyPackage(b!);
    const forged = kp.slice();
    forged[forged.length - 10]! ^= 0x01; // inside the signature
    await expectCode(inspectKeyPackage(forged), 'invalid_key_package');
    await expectCode(a!.addMembers('g', [forged]), 'invalid_key_package');
    expect(a!.epoch('g')).toBe(0n);
    await expectCode(a!.addMembers('g', [await a!.encrypt('g', 'x')]), 'invalid_key_package');
    await expectCode(a!.addMembers('g', [kp, await oneKeyPackage(b!)]), 'duplicate_member');
    await expectCode(a!.addMembers('g', [await oneKeyPackage(a!)]), 'duplicate_member');
    await a!.addMembers('g', [kp]);
    await expectCode(a!.addMembers('g', [await oneKeyPackage(b!)]), 'duplicate_member');

    // Expired KeyPackages are refused.
    const shortLived = await client('short', { keyPackageLifetimeSeconds: 60 });
    const old = await oneKeyPackage(shortLived);
    const realNow = Date.now();
    const spy = vi.spyOn(Date, 'now').mockReturnValue(realNow + 120_000);
    try {
      await expectCode(a!.addMembers('g', [old]), 'invalid_key_package');
    } finally {
      spy.mockRestore();
    }
    expect((await a!.addMembers('g', [old])).added).toEqual(['short']);
  });

  it('validateCredential hook binds device ids to signature keys', async () => {
    const mallory = await client('mallory');
    const registry = new Map<string, Uint8Array>(); // what GET /devices/{id}/keys would answer
    const check = (deviceId: string, key: Uint8Array) => {
      const k = registry.get(deviceId);
      return k !== undefined && k.every((x, i) => x === key[i]) && k.length === key.length;
    };
    const alice = await client('alice', { validateCredential: check });
    const bob = await client('bob', { validateCredential: check });
    registry.set('alice', alice.signaturePublicKey);
    registry.set('bob', bob.signaturePublicKey);
    // mallory's key is not registered for "mallory"; an impostor claiming to be "bob" neither.
    const impostor = await client('bob');
    await alice.createGroup('g');
    await expectCode(alice.addMembers('g', [await oneKeyPackage(impostor)]), 'invalid_key_package');
    await expectCode(alice.addMembers('g', [await oneKeyPackage(mallory)]), 'invalid_key_package');
    expect(alice.epoch('g')).toBe(0n);
    await bob.joinFromWelcome((await alice.addMembers('g', [await oneKeyPackage(bob)])).welcome);
    await broadcast('g', bob, [alice], 'bound');

    // A device can use its Parley identity key as MLS signature key.
    const { publicKey, signKey } = await (await getCiphersuiteImpl(getCiphersuiteFromName(MLS_CIPHERSUITE))).signature.keygen();
    const carol = await client('carol', { signatureKeyPair: { publicKey, signKey } });
    expect(carol.signaturePublicKey).toEqual(publicKey);
    await expectCode(client('eve', { signatureKeyPair: { publicKey: bob.signaturePublicKey, signKey } }), 'invalid_argument');
  });

  it('deferred merge: stays in the old epoch until the server accepts, yields to a competing commit', async () => {
    const [a, b, c] = await Promise.all(['a', 'b', 'c'].map((id) => client(id)));
    await a!.createGroup('g');
    await b!.joinFromWelcome((await a!.addMembers('g', [await oneKeyPackage(b!)])).welcome);

    // a prepares to add c but waits for the server's answer.
    const pending = await a!.addMembers('g', [await oneKeyPackage(c!)], { deferMerge: true });
    expect(pending.merged).toBe(false);
    expect(a!.epoch('g')).toBe(1n);
    expect(a!.pendingCommit('g')?.commit).toEqual(pending.commit);
    await expectCode(a!.updateKeys('g'), 'invalid_state');
    // The pending commit survives export/import.
    const copy = await MlsClient.importState(a!.exportState());
    expect(copy.pendingCommit('g')).toEqual({ commit: pending.commit, welcome: pending.welcome, commitEpoch: 1n });
    expect(copy.epoch('g')).toBe(1n);
    // Traffic keeps flowing in epoch 1 meanwhile.
    await broadcast('g', b!, [a!], 'still epoch 1');
    // Accepted: merge, and the others follow.
    expect(await a!.mergePendingCommit('g')).toEqual({ epoch: 2n });
    commitResult(await b!.processMessage('g', pending.commit));
    await c!.joinFromWelcome(pending.welcome);
    await broadcast('g', c!, [a!, b!], 'epoch 2');

    // Race: a and b both commit in epoch 2; the server takes b's.
    const losing = await a!.updateKeys('g', { deferMerge: true });
    const winning = await b!.updateKeys('g');
    commitResult(await a!.processMessage('g', winning.commit)); // drops a's pending commit
    commitResult(await c!.processMessage('g', winning.commit));
    expect(a!.pendingCommit('g')).toBeUndefined();
    await expectCode(a!.mergePendingCommit('g'), 'no_pending_commit');
    await expectCode(c!.processMessage('g', losing.commit), 'epoch_too_old');
    await broadcast('g', a!, [b!, c!], 'epoch 3 for all');
  });
});

describe('wire envelope', () => {
  it('encodes and checks header_blob / ciphertext', async () => {
    const [a, b] = await Promise.all(['a', 'b'].map((id) => client(id)));
    await a!.createGroup('conv-9');
    const add = await a!.addMembers('conv-9', [await oneKeyPackage(b!)]);
    const welcomeWire = encodeMlsEnvelope({ groupId: 'conv-9', kind: 'welcome', epoch: add.epoch, message: add.welcome });
    const commitWire = encodeMlsEnvelope({ groupId: 'conv-9', kind: 'commit', epoch: add.commitEpoch, message: add.commit });

    const header = JSON.parse(dec.decode(Uint8Array.from(atob(welcomeWire.header_blob), (ch) => ch.charCodeAt(0))));
    expect(header).toEqual({ v: 1, protocol: 'mls', group_id: 'conv-9', kind: 'welcome', epoch: 1 });
    expect(isMlsHeaderBlob(welcomeWire.header_blob)).toBe(true);
    expect(isMlsHeaderBlob(btoa('{"v":1,"ratchet_pub":"x"}'))).toBe(false);
    expect(isMlsHeaderBlob('%%%')).toBe(false);

    const w = decodeMlsEnvelope(welcomeWire);
    expect(w.header.kind).toBe('welcome');
    await b!.joinFromWelcome(w.message);
    expect(decodeMlsEnvelope(commitWire).header).toEqual({ v: 1, protocol: 'mls', group_id: 'conv-9', kind: 'commit', epoch: 0 });

    const ct = await b!.encrypt('conv-9', 'over the wire');
    const appWire = encodeMlsEnvelope({ groupId: 'conv-9', kind: 'application', epoch: b!.epoch('conv-9'), message: ct });
    const got = decodeMlsEnvelope(appWire);
    expect(dec.decode(application(await a!.processMessage(got.header.group_id, got.message)).plaintext)).toBe('over the wire');

    // The header must agree with the message it carries.
    const asCommit = { ...appWire, header_blob: encodeMlsEnvelope({ groupId: 'conv-9', kind: 'commit', epoch: 1, message: ct }).header_blob };
    await expectCode(Promise.resolve().then(() => decodeMlsEnvelope(asCommit)), 'malformed_message');
    const otherGroup = { ...appWire, header_blob: encodeMlsEnvelope({ groupId: 'conv-x', kind: 'application', epoch: 1, message: ct }).header_blob };
    await expectCode(Promise.resolve().then(() => decodeMlsEnvelope(otherGroup)), 'wrong_group');
    const otherEpoch = { ...appWire, header_blob: encodeMlsEnvelope({ groupId: 'conv-9', kind: 'application', epoch: 7, message: ct }).header_blob };
    await expectCode(Promise.resolve().then(() => decodeMlsEnvelope(otherEpoch)), 'malformed_message');
    await expectCode(Promise.resolve().then(() => decodeMlsEnvelope({ ...appWire, ciphertext: 'not base64!' })), 'malformed_message');
    await expectCode(Promise.resolve().then(() => decodeMlsHeader(btoa('{"v":2,"protocol":"mls"}'))), 'malformed_message');
    expect(() => encodeMlsEnvelope({ groupId: '', kind: 'commit', epoch: 0, message: ct })).toThrow(MlsClientError);
    expect(() => encodeMlsEnvelope({ groupId: 'g', kind: 'commit', epoch: -1, message: ct })).toThrow(MlsClientError);
  });
});

describe('interop with a client written directly against ts-mls', () => {
  const cred = (id: string): Credential => ({ credentialType: 'basic', identity: enc.encode(id) });

  it('raw ts-mls group adds an MlsClient; messages flow both ways', async () => {
    const impl = await getCiphersuiteImpl(getCiphersuiteFromName('MLS_128_DHKEMX25519_CHACHA20POLY1305_SHA256_Ed25519'));
    const rawKp = await generateKeyPackage(cred('raw-device'), defaultCapabilities(), defaultLifetime, [], impl);
    let raw: ClientState = await createGroup(enc.encode('interop-1'), rawKp.publicPackage, rawKp.privatePackage, [], impl);

    const wrapped = await client('wrapped-device');
    const decodedKp = decodeMlsMessage(await oneKeyPackage(wrapped), 0)![0];
    if (decodedKp.wireformat !== 'mls_key_package') throw new Error('expected a KeyPackage');
    const commit = await createCommit(
      { state: raw, cipherSuite: impl },
      { extraProposals: [{ proposalType: 'add', add: { keyPackage: decodedKp.keyPackage } }], ratchetTreeExtension: true },
    );
    raw = commit.newState;
    const welcomeBytes = encodeMlsMessage({ welcome: commit.welcome!, wireformat: 'mls_welcome', version: 'mls10' });
    const joined = await wrapped.joinFromWelcome(welcomeBytes);
    expect(joined).toEqual({ groupId: 'interop-1', epoch: 1n, members: ['raw-device', 'wrapped-device'] });

    // raw -> wrapped
    const out = await createApplicationMessage(raw, enc.encode('from raw ts-mls'), impl);
    raw = out.newState;
    const outBytes = encodeMlsMessage({ privateMessage: out.privateMessage, wireformat: 'mls_private_message', version: 'mls10' });
    const got = application(await wrapped.processMessage('interop-1', outBytes));
    expect(dec.decode(got.plaintext)).toBe('from raw ts-mls');
    expect(got.sender).toBe('raw-device');

    // wrapped -> raw
    const reply = decodeMlsMessage(await wrapped.encrypt('interop-1', 'from MlsClient'), 0)![0];
    if (reply.wireformat !== 'mls_private_message') throw new Error('expected a private message');
    const processed = await processPrivateMessage(raw, reply.privateMessage, emptyPskIndex, impl);
    raw = processed.newState;
    if (processed.kind !== 'applicationMessage') throw new Error('expected an application message');
    expect(dec.decode(processed.message)).toBe('from MlsClient');

    // A commit from the MlsClient (key update) is understood by the raw client.
    const upd = decodeMlsMessage((await wrapped.updateKeys('interop-1')).commit, 0)![0];
    if (upd.wireformat !== 'mls_private_message') throw new Error('expected a private message');
    const afterCommit = await processPrivateMessage(raw, upd.privateMessage, emptyPskIndex, impl);
    raw = afterCommit.newState;
    expect(raw.groupContext.epoch).toBe(2n);
    expect(wrapped.epoch('interop-1')).toBe(2n);
    const again = await createApplicationMessage(raw, enc.encode('epoch 2'), impl);
    const againBytes = encodeMlsMessage({ privateMessage: again.privateMessage, wireformat: 'mls_private_message', version: 'mls10' });
    expect(dec.decode(application(await wrapped.processMessage('interop-1', againBytes)).plaintext)).toBe('epoch 2');
  });

  it('MlsClient group adds a raw ts-mls client through its published KeyPackage', async () => {
    const impl = await getCiphersuiteImpl(getCiphersuiteFromName('MLS_128_DHKEMX25519_CHACHA20POLY1305_SHA256_Ed25519'));
    const rawKp = await generateKeyPackage(cred('raw-2'), defaultCapabilities(), defaultLifetime, [], impl);
    const kpBytes = encodeMlsMessage({ keyPackage: rawKp.publicPackage, wireformat: 'mls_key_package', version: 'mls10' });

    const wrapped = await client('wrapped-2');
    await wrapped.createGroup('interop-2');
    const add = await wrapped.addMembers('interop-2', [kpBytes]);
    expect(add.added).toEqual(['raw-2']);
    const w = decodeMlsMessage(add.welcome, 0)![0];
    if (w.wireformat !== 'mls_welcome') throw new Error('expected a Welcome');
    // No ratchet tree passed: the Welcome carries it.
    let raw = await joinGroup(w.welcome, rawKp.publicPackage, rawKp.privatePackage, emptyPskIndex, impl);
    expect(raw.groupContext.epoch).toBe(1n);

    const m = decodeMlsMessage(await wrapped.encrypt('interop-2', 'hi raw'), 0)![0];
    if (m.wireformat !== 'mls_private_message') throw new Error('expected a private message');
    const r = await processPrivateMessage(raw, m.privateMessage, emptyPskIndex, impl);
    raw = r.newState;
    if (r.kind !== 'applicationMessage') throw new Error('expected an application message');
    expect(dec.decode(r.message)).toBe('hi raw');

    const back = await createApplicationMessage(raw, enc.encode('hi wrapped'), impl);
    const backBytes = encodeMlsMessage({ privateMessage: back.privateMessage, wireformat: 'mls_private_message', version: 'mls10' });
    const got = application(await wrapped.processMessage('interop-2', backBytes));
    expect(dec.decode(got.plaintext)).toBe('hi wrapped');
    expect(got.sender).toBe('raw-2');
  });
});

/**
 * The hybrid post-quantum MLS ciphersuite (design §8.34): X-Wing (X25519 + ML-KEM-768)
 * groups next to classical ones, chosen from what every initial member offers, and interop with
 * clients that run only the classical suite (they fall back). In process, as mls.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { decodeMlsMessage } from 'ts-mls';
import {
  MLS_CIPHERSUITE,
  MLS_HYBRID_CIPHERSUITE,
  MlsClient,
  MlsClientError,
  chooseCiphersuite,
  ciphersuiteId,
  ciphersuiteOfId,
  inspectKeyPackage,
  type MlsProcessResult,
} from '../src/mls/index.js';

const enc = new TextEncoder();
const dec = new TextDecoder();

/** A client as released before X-Wing: the classical suite only. */
const classicalOnly = (deviceId: string) => MlsClient.create({ deviceId, ciphersuites: [MLS_CIPHERSUITE] });

function plaintextOf(r: MlsProcessResult): string {
  if (r.kind !== 'application') throw new Error(`expected application, got ${r.kind}`);
  return dec.decode(r.plaintext);
}

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'none';
  } catch (e) {
    return e instanceof MlsClientError ? e.code : `other: ${(e as Error).message}`;
  }
}

describe('X-Wing ciphersuite', () => {
  it('is the one ts-mls lists as suite 84: X-Wing KEM, ChaCha20-Poly1305, SHA-512, Ed25519', () => {
    expect(MLS_HYBRID_CIPHERSUITE).toBe('MLS_256_XWING_CHACHA20POLY1305_SHA512_Ed25519');
    expect([ciphersuiteId(MLS_CIPHERSUITE), ciphersuiteId(MLS_HYBRID_CIPHERSUITE)]).toEqual([3, 84]);
    expect(ciphersuiteOfId(84)).toBe(MLS_HYBRID_CIPHERSUITE);
    expect(ciphersuiteOfId(1)).toBeUndefined();
  });

  it('a hybrid pair creates, joins and talks in an X-Wing group; the Welcome and messages are of suite 84', async () => {
    const alice = await MlsClient.create({ deviceId: 'alice' });
    const bob = await MlsClient.create({ deviceId: 'bob' });
    expect(alice.ciphersuites).toEqual([MLS_HYBRID_CIPHERSUITE, MLS_CIPHERSUITE]);
    const [kp] = await bob.generateKeyPackages(1, MLS_HYBRID_CIPHERSUITE);
    const info = await inspectKeyPackage(kp!);
    expect(info.cipherSuite).toBe(MLS_HYBRID_CIPHERSUITE);

    const suite = chooseCiphersuite(alice.ciphersuites, [[info.cipherSuite]]);
    expect(suite).toBe(MLS_HYBRID_CIPHERSUITE);
    expect((await alice.createGroup('g', { ciphersuite: suite })).ciphersuite).toBe(MLS_HYBRID_CIPHERSUITE);
    const added = await alice.addMembers('g', [kp!]);
    const welcome = decodeMlsMessage(added.welcome, 0)![0];
    expect(welcome.wireformat === 'mls_welcome' && welcome.welcome.cipherSuite).toBe(MLS_HYBRID_CIPHERSUITE);
    expect((await bob.joinFromWelcome(added.welcome)).members).toEqual(['alice', 'bob']);
    expect(bob.groupCiphersuite('g')).toBe(MLS_HYBRID_CIPHERSUITE);

    expect(plaintextOf(await bob.processMessage('g', await alice.encrypt('g', 'hello, post-quantum')))).toBe('hello, post-quantum');
    expect(plaintextOf(await alice.processMessage('g', await bob.encrypt('g', enc.encode('hi'))))).toBe('hi');
    // a commit (new epoch, new X-Wing path secrets) and the conversation continues
    const update = await bob.updateKeys('g');
    expect((await alice.processMessage('g', update.commit)).kind).toBe('commit');
    expect(plaintextOf(await bob.processMessage('g', await alice.encrypt('g', 'after the update')))).toBe('after the update');
  });

  it('falls back to the classical suite when a member (an older client) offers only it', async () => {
    const alice = await MlsClient.create({ deviceId: 'alice' });
    const old = await classicalOnly('old');
    expect(old.ciphersuites).toEqual([MLS_CIPHERSUITE]);
    expect(await codeOf(old.generateKeyPackages(1, MLS_HYBRID_CIPHERSUITE))).toBe('invalid_argument');
    const [kp] = await old.generateKeyPackages(1);
    const suite = chooseCiphersuite(alice.ciphersuites, [[(await inspectKeyPackage(kp!)).cipherSuite]]);
    expect(suite).toBe(MLS_CIPHERSUITE);
    await alice.createGroup('g', { ciphersuite: suite });
    const added = await alice.addMembers('g', [kp!]);
    await old.joinFromWelcome(added.welcome);
    expect(plaintextOf(await old.processMessage('g', await alice.encrypt('g', 'classical')))).toBe('classical');
    // and an older creator never makes a hybrid group
    expect(chooseCiphersuite(old.ciphersuites, [[MLS_HYBRID_CIPHERSUITE, MLS_CIPHERSUITE]])).toBe(MLS_CIPHERSUITE);
  });

  it('a group keeps its suite: KeyPackages and Welcomes of another suite are refused', async () => {
    const alice = await MlsClient.create({ deviceId: 'alice' });
    const bob = await MlsClient.create({ deviceId: 'bob' });
    const old = await classicalOnly('old');
    await alice.createGroup('pq', { ciphersuite: MLS_HYBRID_CIPHERSUITE });
    expect(await codeOf(alice.addMembers('pq', await old.generateKeyPackages(1)))).toBe('invalid_key_package');
    // an X-Wing Welcome reaches a classical-only client: refused, it has no such KeyPackage or suite
    const added = await alice.addMembers('pq', await bob.generateKeyPackages(1, MLS_HYBRID_CIPHERSUITE));
    expect(await codeOf(old.joinFromWelcome(added.welcome))).toBe('rejected_message');
    expect(await codeOf(old.createGroup('x', { ciphersuite: MLS_HYBRID_CIPHERSUITE }))).toBe('invalid_argument');
  });

  it('state with X-Wing KeyPackages and groups round-trips through exportState', async () => {
    const alice = await MlsClient.create({ deviceId: 'alice' });
    const bob = await MlsClient.create({ deviceId: 'bob' });
    const [kp] = await bob.generateKeyPackages(1, MLS_HYBRID_CIPHERSUITE);
    await bob.generateKeyPackages(2);
    expect([bob.keyPackageCount(), bob.keyPackageCount(MLS_HYBRID_CIPHERSUITE), bob.keyPackageCount(MLS_CIPHERSUITE)]).toEqual([3, 1, 2]);
    const bob2 = await MlsClient.importState(bob.exportState());
    await alice.createGroup('g', { ciphersuite: MLS_HYBRID_CIPHERSUITE });
    await bob2.joinFromWelcome((await alice.addMembers('g', [kp!])).welcome);
    const alice2 = await MlsClient.importState(alice.exportState());
    expect(alice2.groupCiphersuite('g')).toBe(MLS_HYBRID_CIPHERSUITE);
    expect(plaintextOf(await bob2.processMessage('g', await alice2.encrypt('g', 'restored')))).toBe('restored');
    // a classical-only client cannot load a state holding an X-Wing group
    expect(await codeOf(MlsClient.importState(alice.exportState(), { ciphersuites: [MLS_CIPHERSUITE] }))).toBe('invalid_state');
  });
});

/**
 * The scenarios of bench/crypto. Each `setup(payload)` builds its sessions outside the timed part
 * and returns a `Step` that moves one message: sealed/encrypted by its sender, opened/decrypted by
 * every receiver, and checked against the payload (the same byte comparison in every scenario).
 */
import { randomUUID } from 'node:crypto';
import {
  createApplicationMessage,
  decodeMlsMessage,
  emptyPskIndex,
  encodeMlsMessage,
  getCiphersuiteFromName,
  getCiphersuiteImpl,
  processPrivateMessage,
  type ClientState,
} from 'ts-mls';
import {
  aeadOpen,
  aeadSeal,
  ed25519Keygen,
  ed25519Sign,
  ed25519Verify,
  randomBytes,
  x25519DH,
  x25519Keygen,
} from '../../packages/sdk/src/crypto/primitives.js';
import { DeviceIdentity } from '../../packages/sdk/src/crypto/keys.js';
import { RatchetSession } from '../../packages/sdk/src/crypto/session.js';
import { MLS_CIPHERSUITE, MlsClient } from '../../packages/sdk/src/mls/client.js';
import { MLS_HYBRID_CIPHERSUITE } from '../../packages/sdk/src/mls/ciphersuites.js';
import type { CiphersuiteName } from 'ts-mls';
import { sameBytes, type Step } from './measure.js';

export interface Scenario {
  id: string;
  label: string;
  /** Decryptions per message (receivers). */
  receivers: number;
  setup(payload: Uint8Array): Promise<Step>;
}

function check(out: Uint8Array, payload: Uint8Array, what: string): void {
  if (!sameBytes(out, payload)) throw new Error(`${what}: decrypted bytes differ from the payload`);
}

/** Baseline: XChaCha20-Poly1305 seal (fresh random 24-byte nonce) + open of the payload, one fixed key. */
const aead: Scenario = {
  id: 'aead',
  label: 'raw XChaCha20-Poly1305 seal+open (baseline)',
  receivers: 1,
  async setup(payload) {
    const key = randomBytes(32);
    return () => check(aeadOpen(key, aeadSeal(key, payload)), payload, 'aead');
  },
};

/** The conversation the benchmark's ratchet sessions are bound to. */
const BENCH_CONVERSATION = { conversationId: 'bench-conversation' };

/** An established X3DH + Double Ratchet session pair (the initiator has had its first reply). */
function ratchetPair(payload: Uint8Array): [RatchetSession, RatchetSession] {
  const alice = DeviceIdentity.generate(randomUUID());
  const bob = DeviceIdentity.generate(randomUUID());
  const a = RatchetSession.initiate(alice, { device_id: bob.deviceId!, ...bob.publicKeys }, BENCH_CONVERSATION);
  const { session: b } = RatchetSession.respond(bob, a.encrypt(payload), alice.identityPublicKeyHex, BENCH_CONVERSATION);
  check(a.decrypt(b.encrypt(payload)), payload, 'ratchet set-up');
  if (a.awaitingFirstReply) throw new Error('ratchet set-up: initiator still awaits its first reply');
  return [a, b];
}

/** Double Ratchet through the SDK's RatchetSession (signed header, wire encoding) with the direction switching every `burst` messages. */
function doubleRatchet(id: string, label: string, burst: number): Scenario {
  return {
    id,
    label,
    receivers: 1,
    async setup(payload) {
      const [a, b] = ratchetPair(payload);
      let i = 0;
      return () => {
        const forward = Math.floor(i++ / burst) % 2 === 0;
        const [from, to] = forward ? [a, b] : [b, a];
        check(to.decrypt(from.encrypt(payload)), payload, id);
      };
    },
  };
}

/** An MLS group of `n` MlsClients (member 0 created it and added the others in one commit). */
async function mlsGroup(n: number): Promise<MlsClient[]> {
  const members = await Promise.all(Array.from({ length: n }, () => MlsClient.create({ deviceId: randomUUID() })));
  const [creator, ...others] = members;
  await creator!.createGroup('bench');
  if (others.length > 0) {
    const kps = await Promise.all(others.map(async (m) => (await m.generateKeyPackages(1))[0]!));
    const { welcome } = await creator!.addMembers('bench', kps);
    for (const m of others) await m.joinFromWelcome(welcome);
  }
  return members;
}

/** MlsClient.encrypt by one member, processMessage by every other; the sender rotates. */
function mls(n: number): Scenario {
  return {
    id: `mls${n}`,
    label: `MLS application message, ${n} members (MlsClient)`,
    receivers: n - 1,
    async setup(payload) {
      const members = await mlsGroup(n);
      let i = 0;
      return async () => {
        const s = i++ % n;
        const ct = await members[s]!.encrypt('bench', payload);
        for (let r = 0; r < n; r++) {
          if (r === s) continue;
          const got = await members[r]!.processMessage('bench', ct);
          if (got.kind !== 'application') throw new Error(`mls${n}: expected an application message, got ${got.kind}`);
          check(got.plaintext, payload, `mls${n}`);
        }
      };
    },
  };
}

/** The same 2-member traffic on ts-mls's own API (encode/decode included): what MlsClient adds on top. */
const tsMlsDirect: Scenario = {
  id: 'ts-mls2',
  label: 'MLS application message, 2 members (ts-mls API directly)',
  receivers: 1,
  async setup(payload) {
    // Build the group with MlsClient, then drive both states with ts-mls directly.
    const [a, b] = await mlsGroup(2);
    const impl = await getCiphersuiteImpl(getCiphersuiteFromName(MLS_CIPHERSUITE));
    // MlsClient keeps its ts-mls ClientState per group; the bench reads it (it is not public API).
    const stateOf = (c: MlsClient) => (c as unknown as { groups: Map<string, ClientState> }).groups.get('bench')!;
    const states = [stateOf(a!), stateOf(b!)];
    let i = 0;
    return async () => {
      const s = i++ % 2;
      const r = 1 - s;
      const out = await createApplicationMessage(states[s]!, payload, impl);
      states[s] = out.newState;
      const bytes = encodeMlsMessage({ version: 'mls10', wireformat: 'mls_private_message', privateMessage: out.privateMessage });
      const msg = decodeMlsMessage(bytes, 0)![0];
      if (msg.wireformat !== 'mls_private_message') throw new Error('ts-mls2: expected a PrivateMessage');
      const got = await processPrivateMessage(states[r]!, msg.privateMessage, emptyPskIndex, impl);
      states[r] = got.newState;
      if (got.kind !== 'applicationMessage') throw new Error(`ts-mls2: expected an application message, got ${got.kind}`);
      check(got.message, payload, 'ts-mls2');
    };
  },
};

/**
 * Session set-up: one X3DH or PQXDH handshake per step, from the initiator's
 * key agreement to the responder's decryption of the first message (both identities and the
 * responder's prekeys made once, outside the step, as published prekeys are).
 */
function handshake(id: string, label: string, postQuantum: boolean): Scenario {
  return {
    id,
    label,
    receivers: 1,
    async setup(payload) {
      const alice = DeviceIdentity.generate(randomUUID());
      const bob = DeviceIdentity.generate(randomUUID());
      const peer = { device_id: bob.deviceId!, ...bob.publicKeys };
      const options = { ...BENCH_CONVERSATION, ...(postQuantum ? { pqPrekey: bob.pqPrekey! } : {}) };
      return () => {
        const first = RatchetSession.initiate(alice, peer, options).encrypt(payload);
        const { session, plaintext } = RatchetSession.respond(bob, first, alice.identityPublicKeyHex, BENCH_CONVERSATION);
        if (session.postQuantum !== postQuantum) throw new Error(`${id}: wrong key agreement`);
        check(plaintext, payload, id);
      };
    },
  };
}

/**
 * MLS 1:1 session set-up in one suite: the joiner makes a KeyPackage, the creator makes a group and
 * adds it (commit + Welcome), the joiner joins, one application message crosses; then both forget
 * the group (not a measurable share of the step).
 */
function mlsHandshake(id: string, label: string, ciphersuite: CiphersuiteName): Scenario {
  return {
    id,
    label,
    receivers: 1,
    async setup(payload) {
      const [creator, joiner] = await Promise.all([MlsClient.create({ deviceId: randomUUID() }), MlsClient.create({ deviceId: randomUUID() })]);
      let i = 0;
      return async () => {
        const group = `hs-${i++}`;
        const [kp] = await joiner!.generateKeyPackages(1, ciphersuite);
        await creator!.createGroup(group, { ciphersuite });
        const { welcome } = await creator!.addMembers(group, [kp!]);
        await joiner!.joinFromWelcome(welcome);
        const got = await joiner!.processMessage(group, await creator!.encrypt(group, payload));
        if (got.kind !== 'application') throw new Error(`${id}: expected an application message`);
        check(got.plaintext, payload, id);
        await Promise.all([creator!.deleteGroup(group), joiner!.deleteGroup(group)]);
      };
    },
  };
}

export const SCENARIOS: Scenario[] = [
  aead,
  doubleRatchet('dr-alt', 'Double Ratchet 1:1, direction alternates every message', 1),
  doubleRatchet('dr-burst', 'Double Ratchet 1:1, one-way bursts of 100', 100),
  mls(2),
  mls(3),
  tsMlsDirect,
  handshake('hs-x3dh', 'handshake: X3DH + first message (initiate, encrypt, respond)', false),
  handshake('hs-pqxdh', 'handshake: PQXDH (X25519 + ML-KEM-768) + first message', true),
  mlsHandshake('hs-mls', 'handshake: MLS 1:1 group, suite 3 (KeyPackage, create, add, join, 1 message)', MLS_CIPHERSUITE),
  mlsHandshake('hs-mls-xwing', 'handshake: MLS 1:1 group, X-Wing suite 84 (same steps)', MLS_HYBRID_CIPHERSUITE),
];

/**
 * Single primitives, to read the table above: the Double Ratchet signs every header with Ed25519
 * and verifies it (through the SDK's crypto provider: node:crypto or @noble) and adds a DH ratchet
 * step (X25519 key pair + 2 DH) whenever the direction changes; ts-mls signs and verifies every
 * application message through WebCrypto (importing the PKCS#8 key on every signature) and derives
 * its keys with async WebCrypto calls.
 */
export interface Primitive {
  id: string;
  label: string;
  /** Does not go through the SDK's provider: measured once, under the first provider. */
  independent?: true;
  setup(): Step;
}

export const PRIMITIVES: Primitive[] = [
  {
    id: 'ed25519-sign',
    label: 'Ed25519 sign, 256 B (SDK provider, Double Ratchet headers)',
    setup() {
      const kp = ed25519Keygen();
      const msg = randomBytes(256);
      return () => void ed25519Sign(msg, kp.secretKey);
    },
  },
  {
    id: 'ed25519-verify',
    label: 'Ed25519 verify, 256 B (SDK provider, Double Ratchet headers)',
    setup() {
      const kp = ed25519Keygen();
      const msg = randomBytes(256);
      const sig = ed25519Sign(msg, kp.secretKey);
      return () => {
        if (!ed25519Verify(sig, msg, kp.publicKey)) throw new Error('verify failed');
      };
    },
  },
  {
    id: 'x25519-dh',
    label: 'X25519 DH (SDK provider; a DH ratchet step is 1 key pair + 2 DH)',
    setup() {
      const a = x25519Keygen();
      const b = x25519Keygen();
      return () => void x25519DH(a.secretKey, b.publicKey);
    },
  },
  {
    id: 'x25519-keygen',
    label: 'X25519 key pair (SDK provider; one per DH ratchet step)',
    setup() {
      return () => void x25519Keygen();
    },
  },
  {
    id: 'webcrypto-sign-verify',
    label: 'Ed25519 sign+verify, 256 B (WebCrypto, PKCS#8 import per signature, as ts-mls does)',
    independent: true,
    setup() {
      const subtle = globalThis.crypto.subtle;
      const msg = new Uint8Array(new ArrayBuffer(256));
      msg.set(randomBytes(256));
      let keys: Promise<{ pkcs8: ArrayBuffer; pub: CryptoKey }> | undefined;
      return async () => {
        keys ??= (async () => {
          const kp = (await subtle.generateKey('Ed25519', true, ['sign', 'verify'])) as CryptoKeyPair;
          return { pkcs8: await subtle.exportKey('pkcs8', kp.privateKey), pub: kp.publicKey };
        })();
        const { pkcs8, pub } = await keys;
        const key = await subtle.importKey('pkcs8', pkcs8, 'Ed25519', false, ['sign']);
        const sig = await subtle.sign('Ed25519', key, msg);
        if (!(await subtle.verify('Ed25519', pub, sig, msg))) throw new Error('verify failed');
      };
    },
  },
];

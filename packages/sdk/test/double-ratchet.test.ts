/**
 * X3DH + Double Ratchet sessions (contract §1.3, §2.4): delivery order, skipped-key bounds, replay,
 * tampering, forward secrecy of the serialized state, X3DH agreement and the design §7 fingerprint.
 * The session and serialized-state suites run twice: on a session agreed with classical X3DH and
 * on one agreed with PQXDH (PQXDH's own tests are in pqxdh.test.ts).
 */
import { randomUUID } from 'node:crypto';
import { blake2b } from '@noble/hashes/blake2.js';
import { describe, expect, it } from 'vitest';
import {
  DeviceIdentity,
  DoubleRatchet,
  RatchetSession,
  base64ToBytes,
  bytesToBase64,
  bytesToHex,
  decodeFrame,
  encodeFrame,
  encodeSessionContext,
  fingerprint,
  headerSignatureMessage,
  headerSigningBytes,
  utf8Decode,
  utf8Encode,
  x3dhInitiate,
  x3dhRespond,
  type DoubleRatchetOptions,
  type WireMessage,
} from '../src/crypto/index.js';
import { AGREEMENTS, BIND, CONTEXT, blobJson, codeOf, device, peerOf, start, text, type Agreement } from './ratchet-fixtures.js';

/** Alice initiates to Bob (classical X3DH); Bob accepts Alice's first message. */
function pair(options?: DoubleRatchetOptions) {
  return pairWith('x3dh', options);
}

/** Alice initiates to Bob with `agreement`; Bob accepts Alice's first message. */
function pairWith(agreement: Agreement, options?: DoubleRatchetOptions) {
  const aliceId = device();
  const bobId = device();
  const alice = start(agreement, aliceId, bobId, options);
  expect(alice.postQuantum).toBe(agreement === 'pqxdh');
  const first = alice.encrypt(text('hello bob'));
  const { session: bob, plaintext } = RatchetSession.respond(bobId, first, aliceId.identityPublicKeyHex, { ...options, ...BIND });
  expect(utf8Decode(plaintext)).toBe('hello bob');
  expect(bob.postQuantum).toBe(agreement === 'pqxdh');
  return { aliceId, bobId, alice, bob };
}

function withBlob(wire: WireMessage, edit: (blob: any) => void): WireMessage {
  const blob = blobJson(wire);
  edit(blob);
  return { header_blob: bytesToBase64(utf8Encode(JSON.stringify(blob))), ciphertext: wire.ciphertext };
}

describe('X3DH', () => {
  it('both sides derive the same SK and AD', () => {
    const a = device();
    const b = device();
    const init = x3dhInitiate(a, b.identityPublicKey, b.ephemeralPublicKey, CONTEXT);
    const resp = x3dhRespond(b, a.identityPublicKey, init.ephemeralPublicKey, CONTEXT);
    expect(init.sharedKey).toHaveLength(32);
    expect(bytesToHex(resp.sharedKey)).toBe(bytesToHex(init.sharedKey));
    expect(init.associatedData).toHaveLength(66 + encodeSessionContext(CONTEXT).length);
    expect(init.associatedData[0]).toBe(0x05);
    expect(bytesToHex(resp.associatedData)).toBe(bytesToHex(init.associatedData));
  });

  it('a different responder, prekey or initiator gives a different SK', () => {
    const a = device();
    const b = device();
    const c = device();
    const init = x3dhInitiate(a, b.identityPublicKey, b.ephemeralPublicKey, CONTEXT);
    expect(bytesToHex(x3dhRespond(c, a.identityPublicKey, init.ephemeralPublicKey, CONTEXT).sharedKey)).not.toBe(bytesToHex(init.sharedKey));
    expect(bytesToHex(x3dhRespond(b, c.identityPublicKey, init.ephemeralPublicKey, CONTEXT).sharedKey)).not.toBe(bytesToHex(init.sharedKey));
    // a fresh EK_A every time
    expect(bytesToHex(x3dhInitiate(a, b.identityPublicKey, b.ephemeralPublicKey, CONTEXT).sharedKey)).not.toBe(bytesToHex(init.sharedKey));
  });
});

describe('fingerprint (design §7)', () => {
  it('is the first 16 bytes of BLAKE2b-256 of the raw key in 8 groups of 4 hex chars', () => {
    const id = device();
    const fp = id.fingerprint;
    expect(fp).toMatch(/^[0-9a-f]{4}( [0-9a-f]{4}){7}$/);
    const expected = bytesToHex(blake2b(id.identityPublicKey, { dkLen: 32 }).subarray(0, 16));
    expect(fp.replaceAll(' ', '')).toBe(expected);
    expect(fingerprint(id.identityPublicKeyHex)).toBe(fp);
    // BLAKE2b-256 truncated is not BLAKE2b-128 (the digest length is a BLAKE2 parameter)
    expect(fp.replaceAll(' ', '')).not.toBe(bytesToHex(blake2b(id.identityPublicKey, { dkLen: 16 })));
  });

  it('a session exposes the peer fingerprint', () => {
    const { aliceId, bobId, alice, bob } = pair();
    expect(alice.peerFingerprint).toBe(bobId.fingerprint);
    expect(bob.peerFingerprint).toBe(aliceId.fingerprint);
  });
});

describe('DeviceIdentity', () => {
  it('exports and imports as hex JSON and checks the key pairs', () => {
    const id = device();
    const json = JSON.stringify(id);
    const back = DeviceIdentity.fromJSON(json);
    expect(back.identityPublicKeyHex).toBe(id.identityPublicKeyHex);
    expect(back.ephemeralPublicKeyHex).toBe(id.ephemeralPublicKeyHex);
    expect(back.deviceId).toBe(id.deviceId);
    expect(id.publicKeys.identity_public_key).toMatch(/^[0-9a-f]{64}$/);
    const bad = { ...JSON.parse(json), identity_public_key: device().identityPublicKeyHex };
    expect(codeOf(() => DeviceIdentity.fromJSON(bad))).toBe('invalid_state');
    expect(codeOf(() => DeviceIdentity.fromJSON('{'))).toBe('invalid_state');
    expect(DeviceIdentity.generate().deviceId).toBeUndefined();
  });
});

describe('wire frame', () => {
  it('header_blob is base64 JSON {v, protocol, header, signature}; ciphertext is base64', () => {
    const aliceId = device();
    const bobId = device();
    const alice = RatchetSession.initiate(aliceId, peerOf(bobId), BIND);
    const wire = alice.encrypt(text('hi'));
    const blob = blobJson(wire);
    expect(Object.keys(blob).sort()).toEqual(['header', 'protocol', 'signature', 'v']);
    expect(blob.v).toBe(2);
    expect(blob.protocol).toBe('x3dh-dr');
    expect(blob.signature).toMatch(/^[0-9a-f]{128}$/);
    expect(blob.header).toMatchObject({ device_id: aliceId.deviceId, recipient_device_id: bobId.deviceId, conversation_id: BIND.conversationId, msg_num: 0, pn: 0 });
    expect(blob.header.ratchet_pub).toMatch(/^[0-9a-f]{64}$/);
    expect(blob.header.nonce).toMatch(/^[0-9a-f]{48}$/);
    expect(blob.header.x3dh).toEqual({
      identity_key: aliceId.identityPublicKeyHex,
      ephemeral_key: expect.stringMatching(/^[0-9a-f]{64}$/),
      signed_prekey: bobId.ephemeralPublicKeyHex,
    });
    expect(base64ToBytes(wire.ciphertext)).toHaveLength(2 + 16);
    // encode(decode(x)) is stable
    expect(encodeFrame(decodeFrame(wire))).toEqual(wire);
  });

  it('the canonical header bytes sort keys and omit absent fields', () => {
    const h = { pn: 1, nonce: '00'.repeat(24), msg_num: 2, ratchet_pub: 'ab'.repeat(32), device_id: 'd', recipient_device_id: 'r', conversation_id: 'c' };
    const canonical = `{"header":{"conversation_id":"c","device_id":"d","msg_num":2,"nonce":"${'00'.repeat(24)}","pn":1,"ratchet_pub":"${'ab'.repeat(32)}","recipient_device_id":"r"},"protocol":"x3dh-dr","v":2}`;
    expect(new TextDecoder().decode(headerSigningBytes(h))).toBe(canonical);
    // the signature covers them under the message-header signing domain
    expect(new TextDecoder().decode(headerSignatureMessage(h))).toBe(`parley/v2/message-header\u0000${canonical}`);
  });

  it('malformed wire fields are refused as malformed_frame', () => {
    const { alice, bob } = pair();
    const wire = alice.encrypt(text('x'));
    expect(codeOf(() => bob.decrypt({ header_blob: 'not base64!', ciphertext: wire.ciphertext }))).toBe('malformed_frame');
    expect(codeOf(() => bob.decrypt({ header_blob: bytesToBase64(text('[]')), ciphertext: wire.ciphertext }))).toBe('malformed_frame');
    expect(codeOf(() => bob.decrypt(withBlob(wire, (b) => (b.v = '2'))))).toBe('malformed_frame');
    expect(codeOf(() => bob.decrypt(withBlob(wire, (b) => (b.v = 3))))).toBe('unsupported_version');
    expect(codeOf(() => bob.decrypt(withBlob(wire, (b) => (b.header.extra = 1))))).toBe('malformed_frame');
    expect(codeOf(() => bob.decrypt(withBlob(wire, (b) => (b.header.msg_num = -1))))).toBe('malformed_frame');
    expect(codeOf(() => bob.decrypt(withBlob(wire, (b) => (b.header.ratchet_pub = b.header.ratchet_pub.toUpperCase()))))).toBe(
      'malformed_frame',
    );
    expect(codeOf(() => bob.decrypt({ header_blob: wire.header_blob, ciphertext: '%%' }))).toBe('malformed_frame');
    expect(utf8Decode(bob.decrypt(wire))).toBe('x');
  });
});

describe.each(AGREEMENTS)('Double Ratchet session (%s)', (agreement) => {
  const pair = (options?: DoubleRatchetOptions) => pairWith(agreement, options);
  const initiate = (aliceId: DeviceIdentity, bobId: DeviceIdentity) => start(agreement, aliceId, bobId);

  it('converses both ways; x3dh fields stop once the first reply arrives', () => {
    const { alice, bob } = pair();
    expect(alice.awaitingFirstReply).toBe(true);
    const a1 = alice.encrypt(text('second'));
    expect(blobJson(a1).header.x3dh).toBeDefined();
    expect(utf8Decode(bob.decrypt(a1))).toBe('second');
    const b0 = bob.encrypt(text('hi alice'));
    expect(blobJson(b0).header.x3dh).toBeUndefined();
    expect(utf8Decode(alice.decrypt(b0))).toBe('hi alice');
    expect(alice.awaitingFirstReply).toBe(false);
    const a2 = alice.encrypt(text('third'));
    expect(blobJson(a2).header.x3dh).toBeUndefined();
    expect(blobJson(a2).header.pn).toBe(2);
    expect(blobJson(a2).header.msg_num).toBe(0);
    expect(utf8Decode(bob.decrypt(a2))).toBe('third');
    for (let i = 0; i < 5; i++) {
      expect(utf8Decode(alice.decrypt(bob.encrypt(text(`b${i}`))))).toBe(`b${i}`);
      expect(utf8Decode(bob.decrypt(alice.encrypt(text(`a${i}`))))).toBe(`a${i}`);
    }
    expect(bob.decrypt(alice.encrypt(new Uint8Array(0)))).toEqual(new Uint8Array(0));
  });

  it('uses a new ratchet key after each turn and a fresh nonce per message', () => {
    const { alice, bob } = pair();
    const b0 = bob.encrypt(text('1'));
    const b1 = bob.encrypt(text('2'));
    expect(blobJson(b0).header.ratchet_pub).toBe(blobJson(b1).header.ratchet_pub);
    expect(blobJson(b0).header.nonce).not.toBe(blobJson(b1).header.nonce);
    alice.decrypt(b0);
    alice.decrypt(b1);
    const a = alice.encrypt(text('3'));
    bob.decrypt(a);
    const b2 = bob.encrypt(text('4'));
    expect(blobJson(b2).header.ratchet_pub).not.toBe(blobJson(b0).header.ratchet_pub);
  });

  it('decrypts out-of-order delivery within and across ratchet steps', () => {
    const { alice, bob } = pair();
    const chain1 = [0, 1, 2, 3, 4].map((i) => alice.encrypt(text(`a1-${i}`)));
    expect(utf8Decode(bob.decrypt(chain1[3]!))).toBe('a1-3');
    expect(utf8Decode(bob.decrypt(chain1[0]!))).toBe('a1-0');
    expect(bob.skippedKeyCount).toBe(2);
    alice.decrypt(bob.encrypt(text('turn')));
    const chain2 = [0, 1, 2].map((i) => alice.encrypt(text(`a2-${i}`)));
    expect(utf8Decode(bob.decrypt(chain2[2]!))).toBe('a2-2'); // skips 1, 2 of chain1 (pn) and 0, 1 of chain2
    expect(utf8Decode(bob.decrypt(chain1[4]!))).toBe('a1-4');
    expect(utf8Decode(bob.decrypt(chain2[0]!))).toBe('a2-0');
    expect(utf8Decode(bob.decrypt(chain1[1]!))).toBe('a1-1');
    expect(utf8Decode(bob.decrypt(chain1[2]!))).toBe('a1-2');
    expect(utf8Decode(bob.decrypt(chain2[1]!))).toBe('a2-1');
    expect(bob.skippedKeyCount).toBe(0);
  });

  it('the responder can be created from any initial message, then reads the others', () => {
    const aliceId = device();
    const bobId = device();
    const alice = initiate(aliceId, bobId);
    const m = [0, 1, 2].map((i) => alice.encrypt(text(`m${i}`)));
    const { session: bob, plaintext } = RatchetSession.respond(bobId, m[2]!, aliceId.identityPublicKey, { ...BIND, peerDeviceId: aliceId.deviceId! });
    expect(utf8Decode(plaintext)).toBe('m2');
    expect(utf8Decode(bob.decrypt(m[0]!))).toBe('m0');
    expect(utf8Decode(bob.decrypt(m[1]!))).toBe('m1');
    expect(RatchetSession.isInitialMessage(m[0]!)).toBe(true);
    expect(RatchetSession.isInitialMessage(bob.encrypt(text('r')))).toBe(false);
  });

  it('refuses a jump beyond MAX_SKIP and keeps its state', () => {
    const { alice, bob } = pair({ maxSkip: 10 });
    // bob has read message 0 (the initial one), so Nr = 1; byNum[n] has msg_num n
    const byNum: WireMessage[] = [];
    for (let n = 1; n <= 12; n++) byNum[n] = alice.encrypt(text(`m${n}`));
    expect(blobJson(byNum[12]!).header.msg_num).toBe(12);
    expect(codeOf(() => bob.decrypt(byNum[12]!))).toBe('too_many_skipped'); // 11 keys to skip
    expect(bob.skippedKeyCount).toBe(0);
    expect(utf8Decode(bob.decrypt(byNum[11]!))).toBe('m11'); // exactly MAX_SKIP = 10 skipped
    expect(bob.skippedKeyCount).toBe(10);
    expect(utf8Decode(bob.decrypt(byNum[12]!))).toBe('m12');
  });

  it('refuses a jump beyond MAX_SKIP in the previous chain (pn)', () => {
    const { alice, bob } = pair({ maxSkip: 5 });
    for (let i = 0; i < 8; i++) alice.encrypt(text('lost'));
    // alice must receive something to start a new chain: bob sends
    alice.decrypt(bob.encrypt(text('turn')));
    const next = alice.encrypt(text('new chain')); // pn = 9, bob's Nr = 1
    expect(blobJson(next).header.pn).toBe(9);
    expect(codeOf(() => bob.decrypt(next))).toBe('too_many_skipped');
  });

  it('has a default MAX_SKIP of 1000', () => {
    const { alice, bob } = pair();
    const byNum = new Map<number, WireMessage>();
    for (let n = 1; n <= 1002; n++) {
      const w = alice.encrypt(text(`m${n}`));
      if (n >= 1001) byNum.set(n, w);
    }
    expect(codeOf(() => bob.decrypt(byNum.get(1002)!))).toBe('too_many_skipped'); // 1001 keys from Nr = 1
    expect(utf8Decode(bob.decrypt(byNum.get(1001)!))).toBe('m1001'); // 1000 keys
    expect(bob.skippedKeyCount).toBe(1000);
  });

  it('caps the total of stored skipped keys, evicting the oldest', () => {
    const { alice, bob } = pair({ maxSkip: 100, maxSkippedKeys: 5 });
    const msgs = Array.from({ length: 10 }, (_, i) => alice.encrypt(text(`m${i}`)));
    expect(utf8Decode(bob.decrypt(msgs[9]!))).toBe('m9'); // skips 0..8 (9 keys), keeps the 5 newest
    expect(bob.skippedKeyCount).toBe(5);
    expect(codeOf(() => bob.decrypt(msgs[0]!))).toBe('replay');
    expect(codeOf(() => bob.decrypt(msgs[3]!))).toBe('replay');
    expect(utf8Decode(bob.decrypt(msgs[4]!))).toBe('m4');
    expect(utf8Decode(bob.decrypt(msgs[8]!))).toBe('m8');
  });

  it('refuses a replayed frame (current chain, skipped key, past chain, initial message)', () => {
    const aliceId = device();
    const bobId = device();
    const alice = initiate(aliceId, bobId);
    const first = alice.encrypt(text('first'));
    const { session: bob } = RatchetSession.respond(bobId, first, aliceId.identityPublicKeyHex, BIND);
    expect(codeOf(() => bob.decrypt(first))).toBe('replay');
    const a1 = alice.encrypt(text('a1'));
    const a2 = alice.encrypt(text('a2'));
    bob.decrypt(a2);
    bob.decrypt(a1); // from the skipped keys
    expect(codeOf(() => bob.decrypt(a1))).toBe('replay');
    expect(codeOf(() => bob.decrypt(a2))).toBe('replay');
    alice.decrypt(bob.encrypt(text('turn')));
    bob.decrypt(alice.encrypt(text('new chain')));
    expect(codeOf(() => bob.decrypt(a2))).toBe('replay'); // a past receiving chain
    const b = bob.encrypt(text('to alice'));
    expect(utf8Decode(alice.decrypt(b))).toBe('to alice');
    expect(codeOf(() => alice.decrypt(b))).toBe('replay');
  });

  it('refuses a tampered header, signature or ciphertext and keeps its state', () => {
    const { aliceId, alice, bob } = pair();
    const wire = alice.encrypt(text('genuine'));
    const mallory = device();

    // header changed, signature left as is
    expect(codeOf(() => bob.decrypt(withBlob(wire, (b) => (b.header.msg_num += 1))))).toBe('bad_signature');
    expect(codeOf(() => bob.decrypt(withBlob(wire, (b) => (b.header.nonce = 'ff'.repeat(24)))))).toBe('bad_signature');
    expect(codeOf(() => bob.decrypt(withBlob(wire, (b) => delete b.header.x3dh)))).toBe('bad_signature');
    // header changed and re-signed by another identity
    const frame = decodeFrame(wire);
    const forged = { ...frame, header: { ...frame.header, pn: 7 } };
    forged.signature = mallory.sign(headerSignatureMessage(forged.header));
    expect(codeOf(() => bob.decrypt(encodeFrame(forged)))).toBe('bad_signature');
    // signature bit flipped
    const sig = frame.signature.slice();
    sig[10]! ^= 0x01;
    expect(codeOf(() => bob.decrypt(encodeFrame({ ...frame, signature: sig })))).toBe('bad_signature');
    // ciphertext bit flipped, or truncated
    const ct = frame.ciphertext.slice();
    ct[0]! ^= 0x80;
    expect(codeOf(() => bob.decrypt(encodeFrame({ ...frame, ciphertext: ct })))).toBe('decrypt_failed');
    expect(codeOf(() => bob.decrypt(encodeFrame({ ...frame, ciphertext: frame.ciphertext.subarray(0, 10) })))).toBe('decrypt_failed');
    // the header is AEAD associated data: even a header validly signed by the sender but not the
    // one encrypted under (here another nonce) does not decrypt
    const resigned = { ...frame, header: { ...frame.header, nonce: '00'.repeat(24) } };
    resigned.signature = aliceId.sign(headerSignatureMessage(resigned.header));
    expect(codeOf(() => bob.decrypt(encodeFrame(resigned)))).toBe('decrypt_failed');

    expect(utf8Decode(bob.decrypt(wire))).toBe('genuine');
  });

  it('refuses frames from another device or another X3DH session', () => {
    const { aliceId, bobId, alice, bob } = pair();
    const frame = decodeFrame(alice.encrypt(text('x')));
    const other = { ...frame, header: { ...frame.header, device_id: randomUUID() } };
    other.signature = aliceId.sign(headerSignatureMessage(other.header));
    expect(codeOf(() => bob.decrypt(encodeFrame(other)))).toBe('wrong_peer');

    const again = initiate(aliceId, bobId);
    const restart = again.encrypt(text('restart'));
    expect(codeOf(() => bob.decrypt(restart))).toBe('new_session');
    const { session: bob2, plaintext } = RatchetSession.respond(bobId, restart, aliceId.identityPublicKey, BIND);
    expect(utf8Decode(plaintext)).toBe('restart');
    expect(utf8Decode(again.decrypt(bob2.encrypt(text('ok'))))).toBe('ok');
  });

  it('respond checks the peer identity, the signature, the sender and the prekey', () => {
    const aliceId = device();
    const bobId = device();
    const alice = initiate(aliceId, bobId);
    const first = alice.encrypt(text('hi'));
    expect(codeOf(() => RatchetSession.respond(bobId, first, device().identityPublicKeyHex, BIND))).toBe('wrong_peer');
    expect(codeOf(() => RatchetSession.respond(bobId, first, aliceId.identityPublicKeyHex, { ...BIND, peerDeviceId: randomUUID() }))).toBe('wrong_peer');
    expect(codeOf(() => RatchetSession.respond(bobId, withBlob(first, (b) => (b.header.pn = 1)), aliceId.identityPublicKeyHex, BIND))).toBe(
      'bad_signature',
    );
    const rotated = DeviceIdentity.generate(bobId.deviceId);
    expect(codeOf(() => RatchetSession.respond(rotated, first, aliceId.identityPublicKeyHex, BIND))).toBe('unknown_prekey');
    const { session: bob } = RatchetSession.respond(bobId, first, aliceId.identityPublicKeyHex, BIND);
    expect(codeOf(() => RatchetSession.respond(bobId, bob.encrypt(text('no x3dh')), bobId.identityPublicKeyHex, BIND))).toBe('malformed_frame');
    expect(codeOf(() => RatchetSession.initiate(DeviceIdentity.generate(), peerOf(bobId), BIND))).toBe('not_ready');
    expect(codeOf(() => RatchetSession.initiate(aliceId, { ...peerOf(bobId), ephemeral_public_key: '00'.repeat(32) }, BIND))).toBe('invalid_key');
  });

  it('one device answers several initiators with the same ephemeral key', () => {
    const bobId = device();
    const [aliceId, carolId] = [device(), device()];
    const alice = initiate(aliceId, bobId);
    const carol = initiate(carolId, bobId);
    const fromAlice = RatchetSession.respond(bobId, alice.encrypt(text('from alice')), aliceId.identityPublicKeyHex, BIND);
    const fromCarol = RatchetSession.respond(bobId, carol.encrypt(text('from carol')), carolId.identityPublicKeyHex, BIND);
    expect(utf8Decode(fromAlice.plaintext)).toBe('from alice');
    expect(utf8Decode(fromCarol.plaintext)).toBe('from carol');
    expect(utf8Decode(alice.decrypt(fromAlice.session.encrypt(text('to alice'))))).toBe('to alice');
    expect(utf8Decode(carol.decrypt(fromCarol.session.encrypt(text('to carol'))))).toBe('to carol');
    // same sender identity and device, other session: the signature holds, the AEAD does not
    // a frame for Alice names her as recipient: Carol refuses it before trying any key
    expect(codeOf(() => carol.decrypt(fromAlice.session.encrypt(text('crossed'))))).toBe('wrong_context');
  });

  it('refuses a frame on the initiator\'s initial ratchet key (no receiving chain)', () => {
    const aliceId = device();
    const bobId = device();
    const alice = initiate(aliceId, bobId);
    const frame = decodeFrame(alice.encrypt(text('x')));
    const odd = {
      ...frame,
      header: { device_id: bobId.deviceId!, recipient_device_id: aliceId.deviceId!, conversation_id: BIND.conversationId, ratchet_pub: bobId.ephemeralPublicKeyHex, msg_num: 0, pn: 0, nonce: frame.header.nonce },
    };
    odd.signature = bobId.sign(headerSignatureMessage(odd.header));
    const before = alice.serialize();
    expect(codeOf(() => alice.decrypt(encodeFrame(odd)))).toBe('decrypt_failed');
    expect(alice.serialize()).toBe(before);
  });

  it('a responder ratchet cannot send before it decrypted the initial message', () => {
    const bobId = device();
    const aliceId = device();
    const r = DoubleRatchet.initBob({
      local: bobId,
      peerDeviceId: aliceId.deviceId!,
      conversationId: BIND.conversationId,
      peerIdentityKey: aliceId.identityPublicKey,
      sharedKey: new Uint8Array(32),
      associatedData: new Uint8Array(66),
      ratchetKeyPair: bobId.ephemeralKeyPair(),
      x3dhEphemeralKey: '11'.repeat(32),
    });
    expect(codeOf(() => r.encrypt(text('too early')))).toBe('not_ready');
  });
});

describe.each(AGREEMENTS)('serialized state (%s)', (agreement) => {
  const pair = (options?: DoubleRatchetOptions) => pairWith(agreement, options);

  it('round-trips and the conversation continues', () => {
    const { aliceId, bobId, alice, bob } = pair();
    const pending = [alice.encrypt(text('p0')), alice.encrypt(text('p1'))];
    bob.decrypt(pending[1]!);
    const bobJson = bob.serialize();
    const aliceJson = JSON.stringify(alice);
    const bob2 = RatchetSession.fromJSON(bobJson, bobId);
    const alice2 = RatchetSession.fromJSON(aliceJson, aliceId);
    expect(bob2.serialize()).toBe(bobJson);
    expect(utf8Decode(bob2.decrypt(pending[0]!))).toBe('p0');
    expect(utf8Decode(alice2.decrypt(bob2.encrypt(text('r'))))).toBe('r');
    expect(utf8Decode(bob2.decrypt(alice2.encrypt(text('s'))))).toBe('s');
    expect(bob2.role).toBe('responder');
    expect(alice2.role).toBe('initiator');
    expect(bob2.peerDeviceId).toBe(aliceId.deviceId);
  });

  it('belongs to one identity and must be well formed', () => {
    const { aliceId, bob } = pair();
    const json = bob.serialize();
    expect(codeOf(() => RatchetSession.fromJSON(json, aliceId))).toBe('invalid_state');
    expect(codeOf(() => RatchetSession.fromJSON('{"v":1}', aliceId))).toBe('invalid_state');
    expect(codeOf(() => RatchetSession.fromJSON('nope', aliceId))).toBe('invalid_state');
    const o = JSON.parse(json);
    o.dhs.public_key = device().ephemeralPublicKeyHex;
    expect(codeOf(() => RatchetSession.fromJSON(o, aliceId))).toBe('invalid_state');
  });

  it('an old serialized state cannot decrypt messages sent after later ratchet steps', () => {
    const { bobId, alice, bob } = pair();
    const snapshot = bob.serialize(); // what an attacker might steal
    // in the same receiving chain the stolen chain key still works (symmetric ratchet) ...
    const sameChain = alice.encrypt(text('same chain'));
    expect(utf8Decode(RatchetSession.fromJSON(snapshot, bobId).decrypt(sameChain))).toBe('same chain');
    bob.decrypt(sameChain);
    // Bob's reply ratchet key is already in the snapshot, so Alice's answer to it is readable
    // too; the state heals once Bob has drawn a ratchet key after the theft (Double Ratchet §1:
    // "break-in recovery") — two DH ratchet steps later
    alice.decrypt(bob.encrypt(text('reply')));
    const answer = alice.encrypt(text('answer'));
    expect(utf8Decode(bob.decrypt(answer))).toBe('answer'); // bob draws a fresh ratchet key here
    alice.decrypt(bob.encrypt(text('second reply')));
    const later = alice.encrypt(text('after the ratchet steps'));
    expect(codeOf(() => RatchetSession.fromJSON(snapshot, bobId).decrypt(later))).toBe('decrypt_failed');
    expect(utf8Decode(bob.decrypt(later))).toBe('after the ratchet steps');
    // and the current state cannot decrypt what it already decrypted (past keys are gone)
    expect(codeOf(() => bob.decrypt(sameChain))).toBe('replay');
  });

  it('a used message key is gone from the serialized state', () => {
    const { alice, bob } = pair();
    const m1 = alice.encrypt(text('one'));
    const m2 = alice.encrypt(text('two'));
    bob.decrypt(m2);
    const before = JSON.parse(bob.serialize());
    expect(before.skipped).toHaveLength(1);
    const mk: string = before.skipped[0].mk;
    expect(mk).toMatch(/^[0-9a-f]{64}$/);
    expect(before.skipped[0].msg_num).toBe(1);
    bob.decrypt(m1);
    const after = bob.serialize();
    expect(JSON.parse(after).skipped).toEqual([]);
    expect(after).not.toContain(mk);
    // nor does any earlier chain or root key survive a ratchet step
    alice.decrypt(bob.encrypt(text('turn')));
    bob.decrypt(alice.encrypt(text('new')));
    const final = bob.serialize();
    for (const k of [before.rk, before.ckr, before.dhs.secret_key]) expect(final).not.toContain(k);
  });

  it('a failed decrypt leaves the serialized state unchanged', () => {
    const { alice, bob } = pair();
    alice.encrypt(text('lost'));
    const wire = alice.encrypt(text('x'));
    const frame = decodeFrame(wire);
    const ct = frame.ciphertext.slice();
    ct[ct.length - 1]! ^= 1;
    const before = bob.serialize();
    expect(codeOf(() => bob.decrypt(encodeFrame({ ...frame, ciphertext: ct })))).toBe('decrypt_failed');
    expect(bob.serialize()).toBe(before);
  });

  it('options override the stored limits', () => {
    const { bobId, alice, bob } = pair({ maxSkip: 3 });
    const msgs = Array.from({ length: 6 }, (_, i) => alice.encrypt(text(`m${i}`)));
    const json = bob.serialize();
    expect(codeOf(() => RatchetSession.fromJSON(json, bobId).decrypt(msgs[5]!))).toBe('too_many_skipped');
    expect(utf8Decode(RatchetSession.fromJSON(json, bobId, { maxSkip: 10 }).decrypt(msgs[5]!))).toBe('m5');
  });
});

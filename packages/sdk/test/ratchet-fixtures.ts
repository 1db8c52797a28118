/**
 * Fixtures of the 1:1 session suites (double-ratchet.test.ts, pqxdh.test.ts): fresh device
 * identities, the peer bundle an initiator reads, a session started with X3DH or PQXDH, the error
 * code a call fails with, and a wire message's decoded header blob.
 */
import { randomUUID } from 'node:crypto';
import {
  CryptoError,
  DeviceIdentity,
  RatchetSession,
  base64ToBytes,
  utf8Decode,
  utf8Encode,
  type CryptoErrorCode,
  type DoubleRatchetOptions,
  type SessionContext,
  type WireMessage,
} from '../src/crypto/index.js';

export const text = (s: string): Uint8Array => utf8Encode(s);

/** A new device identity (with a signed PQ prekey) under a random device id. */
export function device(): DeviceIdentity {
  return DeviceIdentity.generate(randomUUID());
}

/** What an initiator reads of `d`: its device id and public keys. */
export function peerOf(d: DeviceIdentity) {
  return { device_id: d.deviceId!, ...d.publicKeys };
}

/** The conversation the suites' sessions are bound to (`conversationId` of initiate / respond). */
export const BIND = { conversationId: 'conversation-under-test' } as const;

/** A session context for the key-agreement functions called directly. */
export const CONTEXT: SessionContext = { conversationId: BIND.conversationId, initiatorDeviceId: 'alice-device', responderDeviceId: 'bob-device' };

/** The key agreements a session can start with. */
export const AGREEMENTS = ['x3dh', 'pqxdh'] as const;
export type Agreement = (typeof AGREEMENTS)[number];

/** Alice starts a session with Bob: X3DH, or PQXDH with Bob's signed PQ prekey. */
export function start(agreement: Agreement, aliceId: DeviceIdentity, bobId: DeviceIdentity, options?: DoubleRatchetOptions): RatchetSession {
  return RatchetSession.initiate(aliceId, peerOf(bobId), { ...options, ...BIND, ...(agreement === 'pqxdh' ? { pqPrekey: bobId.pqPrekey! } : {}) });
}

/** The CryptoError code `f` throws, `none` when it returns, `other` for any other error. */
export function codeOf(f: () => unknown): CryptoErrorCode | 'none' | 'other' {
  try {
    f();
    return 'none';
  } catch (e) {
    return e instanceof CryptoError ? e.code : 'other';
  }
}

/** The JSON of a wire message's header blob (`{header, signature, …}`). */
export function blobJson(wire: WireMessage): any {
  return JSON.parse(utf8Decode(base64ToBytes(wire.header_blob)));
}

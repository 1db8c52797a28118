/**
 * Property: for random messages, sent in both directions interleaved and delivered in random
 * order (within MAX_SKIP), every message decrypts to what was sent, exactly once; persisting
 * and restoring the sessions at random points changes nothing.
 */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DeviceIdentity, RatchetSession, type WireMessage } from '../src/crypto/index.js';
import { BIND } from './ratchet-fixtures.js';

type Side = 'alice' | 'bob';
type Op =
  | { kind: 'send'; from: Side; message: Uint8Array }
  | { kind: 'deliver'; to: Side; pick: number }
  | { kind: 'persist'; side: Side };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('send' as const), from: fc.constantFrom<Side>('alice', 'bob'), message: fc.uint8Array({ maxLength: 64 }) }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('deliver' as const), to: fc.constantFrom<Side>('alice', 'bob'), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('persist' as const), side: fc.constantFrom<Side>('alice', 'bob') }) },
);

interface InFlight {
  wire: WireMessage;
  message: Uint8Array;
}

describe('Double Ratchet (property)', () => {
  it('decrypt(encrypt(m)) = m for random messages and delivery orders, both directions interleaved', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), fc.array(opArb, { maxLength: 60 }), fc.array(fc.nat(), { maxLength: 200 }), (firstMessage, ops, drainOrder) => {
        const ids = { alice: DeviceIdentity.generate(randomUUID()), bob: DeviceIdentity.generate(randomUUID()) };
        const sessions: { alice: RatchetSession; bob?: RatchetSession } = {
          alice: RatchetSession.initiate(ids.alice, { device_id: ids.bob.deviceId!, ...ids.bob.publicKeys }, BIND),
        };
        // in flight towards each side, in send order; delivery picks any of them
        const queue: Record<Side, InFlight[]> = { alice: [], bob: [] };
        queue.bob.push({ wire: sessions.alice.encrypt(firstMessage), message: firstMessage });
        let delivered = 0;
        let sent = 1;

        const deliver = (to: Side, pick: number) => {
          const q = queue[to];
          if (q.length === 0) return;
          const [item] = q.splice(pick % q.length, 1) as [InFlight];
          let plaintext: Uint8Array;
          if (to === 'bob' && !sessions.bob) {
            const r = RatchetSession.respond(ids.bob, item.wire, ids.alice.identityPublicKeyHex, { ...BIND, peerDeviceId: ids.alice.deviceId! });
            sessions.bob = r.session;
            plaintext = r.plaintext;
          } else {
            plaintext = sessions[to]!.decrypt(item.wire);
          }
          expect(plaintext).toEqual(item.message);
          // exactly once: the same frame again is refused
          expect(() => sessions[to]!.decrypt(item.wire)).toThrow(expect.objectContaining({ name: 'CryptoError', code: 'replay' }));
          delivered += 1;
        };

        for (const op of ops) {
          if (op.kind === 'send') {
            const session = sessions[op.from];
            if (!session) continue; // bob has no session until alice's first message arrives
            queue[op.from === 'alice' ? 'bob' : 'alice'].push({ wire: session.encrypt(op.message), message: op.message });
            sent += 1;
          } else if (op.kind === 'deliver') {
            deliver(op.to, op.pick);
          } else {
            const session = sessions[op.side];
            if (session) sessions[op.side] = RatchetSession.fromJSON(JSON.parse(JSON.stringify(session)), ids[op.side]);
          }
        }
        // drain whatever is still in flight, in a random order
        let i = 0;
        while (queue.alice.length + queue.bob.length > 0) {
          const pick = drainOrder[i % Math.max(1, drainOrder.length)] ?? 0;
          const to: Side = queue.bob.length === 0 || (queue.alice.length > 0 && pick % 2 === 1) ? 'alice' : 'bob';
          deliver(to, pick + i);
          i += 1;
        }
        expect(delivered).toBe(sent);
        expect(sessions.alice.skippedKeyCount).toBe(0);
        expect(sessions.bob?.skippedKeyCount ?? 0).toBe(0);
      }),
      { numRuns: 60 },
    );
  });
});

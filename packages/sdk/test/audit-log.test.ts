/**
 * The audit log's verifier (design §8.33) on reference data it did not make:
 * - RFC 6962 / RFC 9162 trees: the Certificate Transparency reference leaves, roots, inclusion
 *   and consistency proofs (fixtures/rfc6962.ts), the roots also recomputed by hand from the RFC's
 *   MTH definition with node:crypto;
 *   every proof corrupted the ways those suites corrupt them (index, size, leaf, root, a flipped
 *   bit, an element added, dropped or moved) fails;
 * - C2SP signed notes: the Go `golang.org/x/mod/sumdb/note` test keys and signatures (a vkey's key
 *   id, a note signed by two keys, malformed notes);
 * - the audit event's chain hash against the hand-computed values the server's test checks too (fixtures/audit-chain.ts).
 */
import { describe, expect, it } from 'vitest';
import {
  AuditLogError,
  auditEventHash,
  emptyRoot,
  formatVkey,
  leafHash,
  nodeHash,
  parseCheckpointText,
  parseSignedNote,
  parseVkey,
  rootFromInclusionProof,
  verifyConsistency,
  verifyInclusion,
  verifyNote,
} from '../src/index.js';
import { CHAIN_EVENT_1, CHAIN_EVENT_2, CHAIN_HASH_1, CHAIN_HASH_2 } from '../testing/audit-chain.js';
import { CT_CONSISTENCY, CT_EMPTY_ROOT, CT_INCLUSION, CT_LEAVES, CT_ROOTS, referenceRoot } from '../testing/rfc6962.js';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const unhex = (h: string) => new Uint8Array(Buffer.from(h, 'hex'));

const someHash = unhex('abacaba000000000000000000000000000000000000000000060061e00123456');
const flip = (proof: Uint8Array[], i: number, bit: number) => proof.map((p, j) => (j === i ? Uint8Array.from(p, (b, k) => (k === 0 ? b ^ bit : b)) : p));

describe('RFC 9162 tree hashing', () => {
  it('gives the CT reference roots, as the RFC recursion computed by hand does', () => {
    expect(hex(emptyRoot())).toBe(CT_EMPTY_ROOT);
    expect(referenceRoot([]).toString('hex')).toBe(CT_EMPTY_ROOT);
    for (let n = 1; n <= 8; n++) expect(referenceRoot(CT_LEAVES.slice(0, n)).toString('hex'), `size ${n}`).toBe(CT_ROOTS[n - 1]);
    expect(hex(leafHash(CT_LEAVES[0]!))).toBe(CT_ROOTS[0]);
    expect(hex(nodeHash(leafHash(CT_LEAVES[0]!), leafHash(CT_LEAVES[1]!)))).toBe(CT_ROOTS[1]);
  });
});

describe('inclusion proofs (RFC 9162 §2.1.3.2)', () => {
  for (const v of CT_INCLUSION) {
    it(`leaf ${v.index} in a tree of ${v.size}: the reference proof verifies and every corruption of it fails`, () => {
      const leaf = leafHash(CT_LEAVES[v.index]!);
      const root = unhex(CT_ROOTS[v.size - 1]!);
      const path = v.path.map(unhex);
      expect(hex(rootFromInclusionProof(v.index, v.size, leaf, path))).toBe(CT_ROOTS[v.size - 1]);
      expect(() => verifyInclusion(v.index, v.size, leaf, path, root)).not.toThrow();
      const probes: [string, () => void][] = [
        ['index - 1', () => verifyInclusion(v.index - 1, v.size, leaf, path, root)],
        ['index + 1', () => verifyInclusion(v.index + 1, v.size, leaf, path, root)],
        ['index ^ 2', () => verifyInclusion(v.index ^ 2, v.size, leaf, path, root)],
        ['size * 2', () => verifyInclusion(v.index, v.size * 2, leaf, path, root)],
        ['size / 2', () => verifyInclusion(v.index, Math.floor(v.size / 2), leaf, path, root)],
        ['wrong leaf', () => verifyInclusion(v.index, v.size, leafHash(Uint8Array.of(9)), path, root)],
        ['empty root', () => verifyInclusion(v.index, v.size, leaf, path, emptyRoot())],
        ['random root', () => verifyInclusion(v.index, v.size, leaf, path, someHash)],
        ['trailing root', () => verifyInclusion(v.index, v.size, leaf, [...path, root], root)],
        ['preceding root', () => verifyInclusion(v.index, v.size, leaf, [root, ...path], root)],
        ['short element', () => verifyInclusion(v.index, v.size, leaf, [...path, new Uint8Array(0)], root)],
        ...path.map((_, i): [string, () => void] => [`bit flipped in path[${i}]`, () => verifyInclusion(v.index, v.size, leaf, flip(path, i, 8), root)]),
        ...(path.length > 0 ? [['removed element', () => verifyInclusion(v.index, v.size, leaf, path.slice(0, -1), root)] as [string, () => void]] : []),
        ...(path.length > 1 ? [['inserted element', () => verifyInclusion(v.index, v.size, leaf, [path[0]!, someHash, ...path.slice(1)], root)] as [string, () => void]] : []),
      ];
      for (const [what, probe] of probes) expect(probe, what).toThrow(AuditLogError);
    });
  }
});

describe('consistency proofs (RFC 9162 §2.1.4.2)', () => {
  for (const v of CT_CONSISTENCY) {
    it(`${v.first} -> ${v.second}: the reference proof verifies and every corruption of it fails`, () => {
      const r1 = unhex(CT_ROOTS[v.first - 1]!);
      const r2 = unhex(CT_ROOTS[v.second - 1]!);
      const proof = v.proof.map(unhex);
      expect(() => verifyConsistency(v.first, v.second, r1, r2, proof)).not.toThrow();
      if (proof.length === 0) return;
      const probes: [string, () => void][] = [
        ['first - 1', () => verifyConsistency(v.first - 1, v.second, r1, r2, proof)],
        ['first + 1', () => verifyConsistency(v.first + 1, v.second, r1, r2, proof)],
        ['first ^ 2', () => verifyConsistency(v.first ^ 2, v.second, r1, r2, proof)],
        ['second * 2', () => verifyConsistency(v.first, v.second * 2, r1, r2, proof)],
        ['second / 2', () => verifyConsistency(v.first, Math.floor(v.second / 2), r1, r2, proof)],
        ['wrong first root', () => verifyConsistency(v.first, v.second, someHash, r2, proof)],
        ['wrong second root', () => verifyConsistency(v.first, v.second, r1, someHash, proof)],
        ['swapped roots', () => verifyConsistency(v.first, v.second, r2, r1, proof)],
        ['empty proof', () => verifyConsistency(v.first, v.second, r1, r2, [])],
        ['trailing root1', () => verifyConsistency(v.first, v.second, r1, r2, [...proof, r1])],
        ['trailing root2', () => verifyConsistency(v.first, v.second, r1, r2, [...proof, r2])],
        ['preceding root1', () => verifyConsistency(v.first, v.second, r1, r2, [r1, ...proof])],
        ['preceding root2', () => verifyConsistency(v.first, v.second, r1, r2, [r2, ...proof])],
        ['preceding proof[0]', () => verifyConsistency(v.first, v.second, r1, r2, [proof[0]!, ...proof])],
        ['truncated proof', () => verifyConsistency(v.first, v.second, r1, r2, proof.slice(0, -1))],
        ...proof.map((_, i): [string, () => void] => [`bit flipped in proof[${i}]`, () => verifyConsistency(v.first, v.second, r1, r2, flip(proof, i, 16))]),
      ];
      for (const [what, probe] of probes) expect(probe, what).toThrow(AuditLogError);
    });
  }

  it('sizes that are always consistent, and the ones that never are', () => {
    const e = emptyRoot();
    expect(() => verifyConsistency(0, 0, e, e, [])).not.toThrow();
    expect(() => verifyConsistency(0, 8, e, unhex(CT_ROOTS[7]!), [])).not.toThrow();
    expect(() => verifyConsistency(3, 3, unhex(CT_ROOTS[2]!), unhex(CT_ROOTS[2]!), [])).not.toThrow();
    expect(() => verifyConsistency(3, 3, unhex(CT_ROOTS[2]!), unhex(CT_ROOTS[3]!), [])).toThrow(/different roots/);
    expect(() => verifyConsistency(3, 3, unhex(CT_ROOTS[2]!), unhex(CT_ROOTS[2]!), [e])).toThrow(/must be empty/);
    expect(() => verifyConsistency(2, 1, unhex(CT_ROOTS[1]!), unhex(CT_ROOTS[0]!), [])).toThrow(/cannot extend/);
  });
});

// ------------------------------------------------------------------ C2SP signed notes: the Go sumdb/note test vectors
const PETER_VKEY = 'PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW';
const ENOCH_VKEY = 'EnochRoot+af0cfe78+ATtqJ7zOtqQtYqOo0CpvDXNlMhV3HeJDpjrASKGLWdop';
const TEXT = "If you think cryptography is the answer to your problem,\nthen you don't know what your problem is.\n";
const PETER_SIG = '— PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n';
const ENOCH_SIG = '— EnochRoot rwz+eBzmZa0SO3NbfRGzPCpDckykFXSdeX+MNtCOXm2/5n2tiOHp+vAF1aGrQ5ovTG01oOTGwnWLox33WWd1RvMc+QQ=\n';

describe('C2SP signed notes', () => {
  it('parses a vkey, checking its key id, and formats the same vkey back', () => {
    const peter = parseVkey(PETER_VKEY);
    expect(peter).toMatchObject({ name: 'PeterNeumann', keyId: 0xc74f20a3 });
    expect(formatVkey(peter.name, peter.publicKey)).toBe(PETER_VKEY);
    expect(parseVkey(ENOCH_VKEY).keyId).toBe(0xaf0cfe78);
    // Go's manglings: a changed byte anywhere, a wrong-length key, an unknown algorithm
    for (let i = 0; i < PETER_VKEY.length; i++) {
      const mangled = PETER_VKEY.slice(0, i) + String.fromCharCode(PETER_VKEY.charCodeAt(i) + 1) + PETER_VKEY.slice(i + 1);
      expect(() => parseVkey(mangled), mangled).toThrow(AuditLogError);
    }
    expect(() => parseVkey('PeterNeumann+cc469956+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TWBADKEY==')).toThrow(AuditLogError);
    expect(() => parseVkey('PeterNeumann+173116ae+ZRpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW')).toThrow(AuditLogError);
  });

  it('verifies the reference note by the keys given, ignoring signatures by other keys', () => {
    const note = `${TEXT}\n${PETER_SIG}${ENOCH_SIG}`;
    expect(parseSignedNote(note).signatures.map((s) => s.name)).toEqual(['PeterNeumann', 'EnochRoot']);
    expect(verifyNote(note, [parseVkey(PETER_VKEY)]).signedBy.map((k) => k.name)).toEqual(['PeterNeumann']);
    expect(verifyNote(note, [parseVkey(PETER_VKEY), parseVkey(ENOCH_VKEY)]).signedBy).toHaveLength(2);
    expect(verifyNote(note, [parseVkey(ENOCH_VKEY)]).text).toBe(TEXT);
    expect(() => verifyNote(note, [])).toThrow(/signed by none/);
    // A signature by a known key that does not verify is an error, not an unknown signature.
    expect(() => verifyNote(`${TEXT}\n${PETER_SIG.slice(0, 60)}ABCD${PETER_SIG.slice(60)}`, [parseVkey(PETER_VKEY)])).toThrow(/does not verify/);
    expect(() => verifyNote(`${TEXT.replace('answer', 'answers')}\n${PETER_SIG}`, [parseVkey(PETER_VKEY)])).toThrow(/does not verify/);
  });

  it('rejects malformed notes as Go does', () => {
    const peter = [parseVkey(PETER_VKEY)];
    const bad = [
      TEXT,
      `${TEXT}\n`,
      `${TEXT}\n${PETER_SIG.slice(0, -1)}`,
      `\u0001${TEXT}\n${PETER_SIG}`,
      `${TEXT}\n— Bad Name x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=`,
      `${TEXT}\n${PETER_SIG}Unexpected line.\n`,
      `${TEXT}\n${PETER_SIG.repeat(101)}`,
    ];
    for (const note of bad) expect(() => verifyNote(note, peter), JSON.stringify(note)).toThrow(expect.objectContaining({ code: 'malformed' }));
  });

  it('reads a checkpoint body: origin, decimal size, base64 root, extension lines', () => {
    const root = Buffer.from(CT_ROOTS[7]!, 'hex').toString('base64');
    expect(parseCheckpointText(`example.com/log\n8\n${root}\ntimestamp 2026-01-01T00:00:00.000Z\n`)).toMatchObject({ origin: 'example.com/log', treeSize: 8, extensions: ['timestamp 2026-01-01T00:00:00.000Z'] });
    for (const bad of [`example.com/log\n08\n${root}\n`, `example.com/log\n8\n${root}`, `\n8\n${root}\n`, `example.com/log\n8\nAAAA\n`, `example.com/log\n8\n${root}\n\n`, 'example.com/log\n8\n']) {
      expect(() => parseCheckpointText(bad), JSON.stringify(bad)).toThrow(AuditLogError);
    }
  });
});

describe('audit event chain hash', () => {
  it('matches the hand-computed values the server test checks too (BLAKE2b-256 over prev_hash bytes || JCS(event))', () => {
    expect(auditEventHash('0'.repeat(64), CHAIN_EVENT_1)).toBe(CHAIN_HASH_1);
    expect(auditEventHash(CHAIN_HASH_1, CHAIN_EVENT_2)).toBe(CHAIN_HASH_2);
  });
});

/**
 * The audit log's verifier (DESIGN §8.33) on reference data it did not make:
 * - RFC 6962 / RFC 9162 trees: the Certificate Transparency reference leaves, roots, inclusion
 *   and consistency proofs (as published with Google's CT and transparency-dev/merkle test suites),
 *   the roots also recomputed here by hand from the RFC's MTH definition with node:crypto;
 *   every proof corrupted the ways those suites corrupt them (index, size, leaf, root, a flipped
 *   bit, an element added, dropped or moved) fails;
 * - C2SP signed notes: the Go `golang.org/x/mod/sumdb/note` test keys and signatures (a vkey's key
 *   id, a note signed by two keys, malformed notes);
 * - the audit event's chain hash against the server's hand-computed value (server test audit.test.ts).
 */
import { createHash } from 'node:crypto';
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

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const unhex = (h: string) => new Uint8Array(Buffer.from(h, 'hex'));

// ------------------------------------------------------------------ CT reference data (RFC 6962 §2.1 = RFC 9162 §2.1)
const CT_LEAVES = ['', '00', '10', '2021', '3031', '40414243', '5051525354555657', '606162636465666768696a6b6c6d6e6f'].map(unhex);
const CT_EMPTY_ROOT = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';
/** Root of the tree of the first n leaves, n = 1..8. */
const CT_ROOTS = [
  '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
  'fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125',
  'aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77',
  'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
  '4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4',
  '76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef',
  'ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c',
  '5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328',
];
/** Inclusion proofs: leaf index (0-based), tree size, audit path. */
const CT_INCLUSION: { index: number; size: number; path: string[] }[] = [
  { index: 0, size: 1, path: [] },
  {
    index: 0,
    size: 8,
    path: [
      '96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7',
      '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
      '6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4',
    ],
  },
  {
    index: 5,
    size: 8,
    path: [
      'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b',
      'ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0',
      'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
    ],
  },
  { index: 2, size: 3, path: ['fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125'] },
  {
    index: 1,
    size: 5,
    path: [
      '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
      '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
      'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b',
    ],
  },
];
/** Consistency proofs: first size, second size, proof. */
const CT_CONSISTENCY: { first: number; second: number; proof: string[] }[] = [
  { first: 1, second: 1, proof: [] },
  {
    first: 1,
    second: 8,
    proof: [
      '96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7',
      '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
      '6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4',
    ],
  },
  {
    first: 6,
    second: 8,
    proof: [
      '0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a',
      'ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0',
      'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
    ],
  },
  {
    first: 2,
    second: 5,
    proof: ['5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e', 'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b'],
  },
  {
    first: 6,
    second: 7,
    proof: [
      '0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a',
      'b08693ec2e721597130641e8211e7eedccb4c26413963eee6c1e2ed16ffb1a5f',
      'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
    ],
  },
];

/** RFC 9162 §2.1.1 MTH, by hand: node:crypto's SHA-256, the recursion as the RFC writes it. */
function referenceRoot(leaves: Uint8Array[]): string {
  const sha = (...parts: Uint8Array[]) => {
    const h = createHash('sha256');
    for (const p of parts) h.update(p);
    return h.digest();
  };
  const mth = (d: Uint8Array[]): Buffer => {
    if (d.length === 0) return sha();
    if (d.length === 1) return sha(Uint8Array.of(0), d[0]!);
    let k = 1;
    while (k * 2 < d.length) k *= 2;
    return sha(Uint8Array.of(1), mth(d.slice(0, k)), mth(d.slice(k)));
  };
  return mth(leaves).toString('hex');
}

const someHash = unhex('abacaba000000000000000000000000000000000000000000060061e00123456');
const flip = (proof: Uint8Array[], i: number, bit: number) => proof.map((p, j) => (j === i ? Uint8Array.from(p, (b, k) => (k === 0 ? b ^ bit : b)) : p));

describe('RFC 9162 tree hashing', () => {
  it('gives the CT reference roots, as the RFC recursion computed by hand does', () => {
    expect(hex(emptyRoot())).toBe(CT_EMPTY_ROOT);
    expect(referenceRoot([])).toBe(CT_EMPTY_ROOT);
    for (let n = 1; n <= 8; n++) expect(referenceRoot(CT_LEAVES.slice(0, n)), `size ${n}`).toBe(CT_ROOTS[n - 1]);
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
  it('matches the hand-computed value of the server test (BLAKE2b-256 over prev_hash bytes || JCS(event))', () => {
    const event = {
      event_id: '00000000-0000-4000-8000-000000000001',
      tenant_id: '11111111-1111-4111-8111-111111111111',
      seq: 1,
      type: 'invite.created',
      actor: 'alice@example.com',
      subject: null,
      data: { n: 2, label: 'x' },
      created_at: '2026-01-02T03:04:05.678Z',
    };
    expect(auditEventHash('0'.repeat(64), event)).toBe('27d151e973d8c464e289b902c36a6fb76e44a759b67944dc38b4b3ac7700e6a1');
  });
});

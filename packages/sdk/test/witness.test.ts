/**
 * The checkpoint witness (C2SP tlog-witness) and its cosignatures (C2SP tlog-cosignature):
 * - cosignature.ts on data it did not make: a type-0x04 vkey published with transparency-dev's
 *   `formats/note` tests, the timestamps of the spec's example cosignature and of that suite's,
 *   the spec's example signed message, and a cosignature checked with node:crypto's Ed25519;
 * - a witness over HTTP on 127.0.0.1, fed checkpoints of the Certificate Transparency test tree
 *   (RFC 6962 / RFC 9162 roots and consistency proofs of `@parley/sdk/testing`) signed by a test log
 *   key, through every answer of add-checkpoint the spec lists, and across a restart.
 */
import { createPublicKey, verify as nodeVerify } from 'node:crypto';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ed25519 } from '@noble/curves/ed25519.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AuditLogError,
  cosignatureKeyId,
  cosignatureMessage,
  cosignLine,
  formatVkey,
  formatWitnessVkey,
  noteKeyId,
  parseVkey,
  parseWitnessVkey,
  splitCosignature,
  verifyCosignatures,
} from '../src/index.js';
import { startWitness, type RunningWitness } from '../src/node/index.js';
import { main as witnessCli } from '../src/node/witness-cli.js';
import { CT_CONSISTENCY, CT_EMPTY_ROOT, CT_LEAVES, CT_ROOTS, referenceRoot } from '../testing/rfc6962.js';

const b64 = (b: Uint8Array) => Buffer.from(b).toString('base64');
const unhex = (h: string) => new Uint8Array(Buffer.from(h, 'hex'));
const ORIGIN = 'parley.test/keys';
const ORIGIN_2 = 'parley.test/other-keys';

/** RFC 9162 §2.1.4.1 PROOF(m, D[n]) over leaf inputs, the recursion as the RFC writes it. */
function consistencyProof(m: number, d: readonly Uint8Array[], complete = true): Uint8Array[] {
  if (m === d.length) return complete ? [] : [referenceRoot(d)];
  let k = 1;
  while (k * 2 < d.length) k *= 2;
  if (m <= k) return [...consistencyProof(m, d.slice(0, k), complete), referenceRoot(d.slice(k))];
  return [...consistencyProof(m - k, d.slice(k), false), referenceRoot(d.slice(0, k))];
}

/** A test log signer (C2SP signed-note, Ed25519 type 0x01). */
function noteSigner(name: string) {
  const secretKey = ed25519.utils.randomSecretKey();
  const publicKey = ed25519.getPublicKey(secretKey);
  const keyId = Buffer.alloc(4);
  keyId.writeUInt32BE(noteKeyId(name, publicKey));
  return {
    vkey: formatVkey(name, publicKey),
    sign: (text: string) => `${text}\n\u2014 ${name} ${b64(Buffer.concat([keyId, ed25519.sign(Buffer.from(text), secretKey)]))}\n`,
  };
}

const checkpointText = (size: number, root: Uint8Array | string, origin = ORIGIN) => `${origin}\n${size}\n${b64(typeof root === 'string' ? unhex(root) : root)}\n`;

describe('C2SP tlog-cosignature (cosignature/v1)', () => {
  it('parses and formats type-0x04 vkeys, checking the key id', () => {
    const REMORA = 'remora.n621.de+da77ade7+BOvN63jn/bLvkieywe8R6UYAtVtNbZpXh34x7onlmtw2';
    const k = parseWitnessVkey(REMORA);
    expect(k).toMatchObject({ name: 'remora.n621.de', keyId: 0xda77ade7 });
    expect(cosignatureKeyId(k.name, k.publicKey)).toBe(0xda77ade7);
    expect(formatWitnessVkey(k.name, k.publicKey)).toBe(REMORA);
    expect(() => parseVkey(REMORA)).toThrow(AuditLogError); // not a note (0x01) key
    expect(() => parseWitnessVkey('PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW')).toThrow(/0x04/);
    expect(() => parseWitnessVkey(REMORA.replace('da77ade7', 'da77ade8'))).toThrow(/key id/);
    expect(() => parseWitnessVkey(REMORA.replace('remora', 'Remora'))).toThrow(/key id/);
    expect(() => formatWitnessVkey('a b', k.publicKey)).toThrow(AuditLogError);
  });

  it('reads the timestamps of published cosignatures and builds the spec example message', () => {
    const spec = Buffer.from('jWbPPwAAAABkGFDLEZMHwSRaJNiIDoe9DYn/zXcrtPHeolMI5OWXEhZCB9dlrDJsX3b2oyin1nPZqhf5nNo0xUe+mbIUBkBIfZ+qnA==', 'base64');
    expect(splitCosignature(spec.subarray(4)).time).toBe(1679315147n);
    const go = Buffer.from('ZGhGuQAAAABm/qTPeyKXD+R2rzyQsxPiP8mXum7qq/iF0u4vanlqJyocWODBt97w9uL+8qT7S5gxEHWWOworDcFiEBYJXORmnFBOBA==', 'base64');
    expect(splitCosignature(go.subarray(4)).time).toBe(1727964367n);
    expect(() => splitCosignature(go.subarray(5))).toThrow(/72 bytes/);
    const text = 'example.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n';
    expect(Buffer.from(cosignatureMessage(text, 1679315147)).toString()).toBe(`cosignature/v1\ntime 1679315147\n${text}`);
    expect(() => cosignatureMessage(text.slice(0, -1), 1)).toThrow(AuditLogError);
    expect(() => cosignatureMessage(text, -1)).toThrow(AuditLogError);
  });

  it('signs a line node:crypto verifies, and verifies only the listed witnesses', () => {
    const secretKey = ed25519.utils.randomSecretKey();
    const publicKey = ed25519.getPublicKey(secretKey);
    const text = checkpointText(3, CT_ROOTS[2]!);
    const line = cosignLine(text, { name: 'w.test/1', secretKey }, 1700000000);
    const m = /^\u2014 w\.test\/1 (\S+)\n$/.exec(line);
    const blob = Buffer.from(m![1]!, 'base64');
    expect(blob.length).toBe(76);
    expect(blob.readUInt32BE(0)).toBe(cosignatureKeyId('w.test/1', publicKey));
    expect(blob.readBigUInt64BE(4)).toBe(1700000000n);
    const spki = createPublicKey({ key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), publicKey]), format: 'der', type: 'spki' });
    expect(nodeVerify(null, Buffer.from(`cosignature/v1\ntime 1700000000\n${text}`), spki, blob.subarray(12))).toBe(true);

    const log = noteSigner(ORIGIN);
    const note = log.sign(text) + line;
    const w = parseWitnessVkey(formatWitnessVkey('w.test/1', publicKey));
    const other = parseWitnessVkey(formatWitnessVkey('w.test/2', ed25519.getPublicKey(ed25519.utils.randomSecretKey())));
    expect(verifyCosignatures(note, [w, other])).toEqual([{ name: 'w.test/1', time: 1700000000 }]);
    expect(verifyCosignatures(note, [other])).toEqual([]);
    expect(() => verifyCosignatures(note, [w], { notAfter: 1699999999 })).toThrow(/future/);
    // The same key as a plain note key (0x01) has another key id: the line is not its.
    expect(verifyCosignatures(note, [{ ...w, keyId: noteKeyId(w.name, publicKey) }])).toEqual([]);
  });
});

describe('the witness (C2SP tlog-witness add-checkpoint)', () => {
  const log = noteSigner(ORIGIN);
  const stranger = noteSigner(ORIGIN);
  let dir: string;
  let witness: RunningWitness;
  let clock = 1_800_000_000;
  const start = () => startWitness({ name: 'witness.test/w1', dataDir: dir, logs: [
        { origin: ORIGIN, vkey: log.vkey },
        { origin: ORIGIN_2, vkey: log.vkey },
      ], port: 0, now: () => clock, log: () => undefined });
  const post = async (body: string, init: RequestInit = {}) => {
    const res = await fetch(`${witness.url}/add-checkpoint`, { method: 'POST', body, ...init });
    return { status: res.status, type: res.headers.get('content-type'), body: await res.text() };
  };
  const add = (old: number, proof: readonly (Uint8Array | string)[], note: string) =>
    post(`old ${old}\n${proof.map((p) => `${b64(typeof p === 'string' ? unhex(p) : p)}\n`).join('')}\n${note}`);
  const leaves = (n: number) => CT_LEAVES.slice(0, n);
  // The CT tree with its 4th leaf replaced: a fork of every size above 3.
  const forkedLeaves = CT_LEAVES.map((l, i) => (i === 3 ? Uint8Array.of(0xff) : l));

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'parley-witness-'));
    witness = await start();
  });
  afterAll(async () => {
    await witness?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('builds proofs as the CT reference suite does', () => {
    for (const c of CT_CONSISTENCY.filter((c) => c.first < c.second)) {
      expect(consistencyProof(c.first, leaves(c.second)).map((p) => Buffer.from(p).toString('hex'))).toEqual(c.proof);
    }
  });

  it('cosigns a first checkpoint (old 0), then extensions with a valid consistency proof', async () => {
    const keyFile = await stat(path.join(dir, 'witness-key'));
    expect(keyFile.mode & 0o777).toBe(0o600);
    const first = log.sign(checkpointText(6, CT_ROOTS[5]!));
    const r = await add(0, [], first);
    expect(r.status, r.body).toBe(200);
    expect(r.body).toMatch(/^\u2014 witness\.test\/w1 \S+\n$/);
    const w = parseWitnessVkey(witness.vkey);
    expect(verifyCosignatures(first + r.body, [w])).toEqual([{ name: 'witness.test/w1', time: clock }]);

    const proof67 = CT_CONSISTENCY.find((c) => c.first === 6 && c.second === 7)!.proof;
    expect((await add(6, proof67, log.sign(checkpointText(7, CT_ROOTS[6]!)))).status).toBe(200);
    const state = JSON.parse(await readFile(path.join(dir, 'state.json'), 'utf8'));
    expect(state.logs[ORIGIN]).toEqual({ size: 7, root: b64(unhex(CT_ROOTS[6]!)) });
  });

  it('answers 409 with its size when old is not the latest cosigned size', async () => {
    const r = await add(6, [], log.sign(checkpointText(6, CT_ROOTS[5]!)));
    expect(r).toEqual({ status: 409, type: 'text/x.tlog.size', body: '7\n' });
  });

  it('answers 422 for a proof that does not verify, a fork, a bad size-0 root or a proof from 0', async () => {
    const proof78 = consistencyProof(7, leaves(8));
    const eight = log.sign(checkpointText(8, CT_ROOTS[7]!));
    const flipped = proof78.map((p, i) => (i === 0 ? Uint8Array.from(p, (b, j) => (j === 0 ? b ^ 1 : b)) : p));
    expect((await add(7, flipped, eight)).status).toBe(422);
    expect((await add(7, proof78.slice(1), eight)).status).toBe(422);
    // A checkpoint of another tree of 8 leaves, consistent with nothing the witness saw.
    const forked = log.sign(checkpointText(8, referenceRoot(forkedLeaves)));
    expect((await add(7, consistencyProof(7, forkedLeaves), forked)).status).toBe(422);
    expect((await add(7, proof78, eight)).status).toBe(200);
    // The same size with another root; the same size with the same root is cosigned again.
    expect((await add(8, [], forked)).status).toBe(422);
    clock += 60;
    const again = await add(8, [], eight);
    expect(again.status).toBe(200);
    expect(verifyCosignatures(eight + again.body, [parseWitnessVkey(witness.vkey)])[0]!.time).toBe(clock);
    // A second log (same key): size 0 needs the empty tree's root; a proof from 0 must be empty.
    expect((await add(0, [], log.sign(checkpointText(0, CT_ROOTS[0]!, ORIGIN_2)))).status).toBe(422);
    expect((await add(0, [], log.sign(checkpointText(0, CT_EMPTY_ROOT, ORIGIN_2)))).status).toBe(200);
    expect((await add(0, [unhex(CT_ROOTS[0]!)], log.sign(checkpointText(2, CT_ROOTS[1]!, ORIGIN_2)))).status).toBe(422);
    expect((await add(0, [], log.sign(checkpointText(2, CT_ROOTS[1]!, ORIGIN_2)))).status).toBe(200);
  });

  it('refuses unknown origins (404), other keys and bad signatures (403), malformed requests (400)', async () => {
    const other = noteSigner('other.test/keys');
    expect((await add(0, [], other.sign(checkpointText(1, CT_ROOTS[0]!, 'other.test/keys')))).status).toBe(404);
    expect((await add(8, [], stranger.sign(checkpointText(8, CT_ROOTS[7]!)))).status).toBe(403);
    const good = log.sign(checkpointText(8, CT_ROOTS[7]!));
    const tampered = good.replace(/(\S)\n$/, (_, c: string) => `${c === 'A' ? 'B' : 'A'}\n`);
    expect((await add(8, [], tampered)).status).toBe(403);
    // A signature by an unknown key next to the log's is ignored.
    const text8 = checkpointText(8, CT_ROOTS[7]!);
    expect((await add(8, [], log.sign(text8) + stranger.sign(text8).split('\n\n')[1])).status).toBe(200);
    expect((await add(9, [], good)).status).toBe(400); // old above the checkpoint size
    expect((await post(`old 08\n\n${good}`)).status).toBe(400);
    expect((await post(`old 8\nnot base64\n\n${good}`)).status).toBe(400);
    expect((await post(`old 8\n${'AAAA\n'.repeat(2)}\n${good}`)).status).toBe(400);
    expect((await post(`old 8\n${`${b64(new Uint8Array(32))}\n`.repeat(64)}\n${good}`)).status).toBe(400);
    expect((await post(`old 8\n`)).status).toBe(400);
    expect((await post(`old 8\n\n${log.sign(`${ORIGIN}\n8\nnot a hash\n`)}`)).status).toBe(400);
    expect((await post('x'.repeat(70 * 1024))).status).toBe(413);
    expect((await fetch(`${witness.url}/add-checkpoint`)).status).toBe(405);
    expect((await fetch(`${witness.url}/other`, { method: 'POST', body: 'x' })).status).toBe(404);
  });

  it('runs from the command line with its flags or the environment', async () => {
    const lines: string[] = [];
    const io = { out: (l: string) => lines.push(l), err: (l: string) => lines.push(l), stopped: () => Promise.resolve() };
    expect(await witnessCli(['--name', 'w.test/cli'], io, {})).toBe(2);
    expect(lines.pop()).toMatch(/^usage:/);
    expect(await witnessCli(['--log', 'no-vkey'], io, { WITNESS_NAME: 'w.test/cli', WITNESS_DATA_DIR: path.join(dir, 'cli') })).toBe(2);
    expect(lines.pop()).toMatch(/--log takes 'ORIGIN VKEY'/);
    const env = { WITNESS_NAME: 'w.test/cli', WITNESS_DATA_DIR: path.join(dir, 'cli'), WITNESS_LOGS: `${ORIGIN} ${log.vkey}\n`, PORT: '0' };
    expect(await witnessCli([], io, env)).toBe(0);
    expect(lines).toEqual([expect.stringMatching(/^witness vkey: w\.test\/cli\+[0-9a-f]{8}\+B/), expect.stringMatching(/^witness listening on http:\/\/127\.0\.0\.1:\d+ /)]);
  });

  it('keeps its key and state across a restart', async () => {
    const vkey = witness.vkey;
    await witness.close();
    witness = await start();
    expect(witness.vkey).toBe(vkey);
    expect(await add(0, [], log.sign(checkpointText(8, CT_ROOTS[7]!)))).toMatchObject({ status: 409, body: '8\n' });
  });

  it('gives cosignatures that verifyCosignatures refuses once tampered with', async () => {
    const note = log.sign(checkpointText(8, CT_ROOTS[7]!));
    const { body } = await add(8, [], note);
    const w = parseWitnessVkey(witness.vkey);
    expect(verifyCosignatures(note + body, [w])).toHaveLength(1);
    const blob = Buffer.from(body.split(' ')[2]!.trim(), 'base64');
    for (const i of [5, 11, 12, 75]) {
      const bad = Buffer.from(blob);
      bad[i]! ^= 1;
      expect(() => verifyCosignatures(`${note}\u2014 witness.test/w1 ${bad.toString('base64')}\n`, [w]), `byte ${i}`).toThrow(expect.objectContaining({ code: 'bad_signature' }));
    }
    // A cosignature of another checkpoint text does not verify on this one.
    expect(() => verifyCosignatures(log.sign(checkpointText(7, CT_ROOTS[6]!)) + body, [w])).toThrow(AuditLogError);
  });
});

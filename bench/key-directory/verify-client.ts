/**
 * bench/key-directory, verification (design §8.39): what a client pays to check a lookup answer,
 * measured in a process of its own — a client's heap, not the benchmark's, which holds a
 * 100k-entry directory whose garbage collection would be charged to the check. directory.ts writes
 * the answers of its full directory to a JSON file and runs this script on it (same Node flags);
 * it prints one JSON line of figures (milliseconds):
 *
 *   verify                 `verifyKeyLookup` with no last checkpoint (a first contact)
 *   verifyWithConsistency  with a last checkpoint 1,000 entries older (adds a consistency proof)
 *   verifyKnownDevice      `verifyKeyLookups` of a device whose VRF output the client verified
 *                          before (the SDK's KeyTransparency keeps it): a later prekey check
 *   parts                  the checkpoint note, the Merkle inclusion, the VRF proof, the
 *                          commitment and prefix path, one sample per call each
 *
 * The two first are sampled in turn (one call of each), after a warm-up.
 */
import fs from 'node:fs';
import { sha256 } from '@noble/hashes/sha2.js';
import { decodeKeyDirectoryEntry, keyDirectoryHashing, prefixRootFromPath, vrfInputOf, vrfVerify, type KeyDirectoryInfo, type KeyLookup } from '@parley/protocol';
import { leafHash, trustFromInfo, verifyDirectoryCheckpoint, verifyInclusion, verifyKeyLookup, verifyKeyLookups, type AcceptedCheckpoint, type KeyDirectoryTrust } from '@parley/sdk';
import { quantiles, samplesOf, type Quantiles } from './stats.js';

/** What directory.ts hands over: the pinned facts, answers at the full size (and from an older size), that older checkpoint. */
export interface ClientInput {
  info: KeyDirectoryInfo;
  samples: { label: string; value: string; answer: KeyLookup; since?: KeyLookup }[];
  last?: { size: number; root: string };
}

/** What this script answers. */
export interface ClientFigures {
  verify: Quantiles;
  verifyWithConsistency: Quantiles;
  verifyKnownDevice: Quantiles;
  parts: { name: string; q: Quantiles }[];
}

const VERIFY_CALLS = 300;
const hashing = keyDirectoryHashing((...parts: Uint8Array[]) => sha256(Buffer.concat(parts)));
const b64 = (s: string) => new Uint8Array(Buffer.from(s, 'base64'));

type Sample = { label: string; value: Uint8Array; answer: KeyLookup; since?: KeyLookup };

/** `verifyKeyLookup`'s parts, one sample per call each, over `answers`. */
function verifyParts(trust: KeyDirectoryTrust, answers: { label: string; value: Uint8Array; answer: KeyLookup }[]): { name: string; q: Quantiles }[] {
  const pick = (i: number) => answers[i % answers.length]!;
  const checkpoint = (a: KeyLookup) => verifyDirectoryCheckpoint(trust, undefined, a.checkpoint.checkpoint, a.consistency);
  const accepted = answers.map((x) => checkpoint(x.answer));
  const outputs = answers.map((x) => vrfVerify(trust.vrfPublicKey, b64(x.answer.vrf_proof), new TextEncoder().encode(vrfInputOf(x.label).vrfLabel))!);
  return [
    { name: 'checkpoint note (Ed25519 signature, parse)', q: quantiles(samplesOf(VERIFY_CALLS, (i) => checkpoint(pick(i).answer))) },
    {
      name: 'Merkle inclusion of the newest entry',
      q: quantiles(
        samplesOf(VERIFY_CALLS, (i) => {
          const { answer } = pick(i);
          const entry = b64(answer.head.entry);
          decodeKeyDirectoryEntry(entry);
          verifyInclusion(answer.head.leaf_index, accepted[i % answers.length]!.size, leafHash(entry), answer.head.audit_path.map(b64), accepted[i % answers.length]!.root);
        }),
      ),
    },
    { name: 'VRF proof (RFC 9381 verify)', q: quantiles(samplesOf(VERIFY_CALLS, (i) => vrfVerify(trust.vrfPublicKey, b64(pick(i).answer.vrf_proof), new TextEncoder().encode(vrfInputOf(pick(i).label).vrfLabel)))) },
    {
      name: 'commitment + prefix path',
      q: quantiles(
        samplesOf(VERIFY_CALLS, (i) => {
          const { label, value, answer } = pick(i);
          const index = hashing.labelIndex(outputs[i % answers.length]!, vrfInputOf(label).subKey);
          const leaf = hashing.prefixLeaf(index, answer.version, hashing.commitment(b64(answer.opening), label, value));
          prefixRootFromPath(hashing, index, leaf, answer.prefix_path.map(b64));
        }),
      ),
    },
  ];
}

/** The figures of `input` (see the file comment). */
export function measure(input: ClientInput): ClientFigures {
  const trust = trustFromInfo(input.info);
  const samples: Sample[] = input.samples.map((x) => ({ ...x, value: b64(x.value) }));
  const last: AcceptedCheckpoint | undefined = input.last && { size: input.last.size, root: b64(input.last.root) };
  const pick = (i: number) => samples[i % samples.length]!;
  for (let i = 0; i < 10; i++) for (const x of samples) verifyKeyLookup(trust, undefined, x.label, x.value, x.answer);
  const plain: number[] = [];
  const consistent: number[] = [];
  for (let i = 0; i < VERIFY_CALLS; i++) {
    plain.push(...samplesOf(1, () => verifyKeyLookup(trust, undefined, pick(i).label, pick(i).value, pick(i).answer)));
    if (last) consistent.push(...samplesOf(1, () => verifyKeyLookup(trust, last, pick(i).label, pick(i).value, pick(i).since!)));
  }
  const outputs = new Map<string, Uint8Array>();
  const toLookups = (a: KeyLookup) => ({ proofs: [{ label: a.label, version: a.version, opening: a.opening, vrf_proof: a.vrf_proof, prefix_path: a.prefix_path }], head: a.head, checkpoint: a.checkpoint, consistency: a.consistency });
  for (const x of samples) verifyKeyLookups(trust, undefined, [[x.label, x.value]], toLookups(x.answer), { vrfOutputs: outputs });
  const verifyKnownDevice = quantiles(samplesOf(VERIFY_CALLS, (i) => verifyKeyLookups(trust, undefined, [[pick(i).label, pick(i).value]], toLookups(pick(i).answer), { vrfOutputs: outputs })));
  return { verify: quantiles(plain), verifyWithConsistency: quantiles(consistent), verifyKnownDevice, parts: verifyParts(trust, samples) };
}

if (process.argv[2]) {
  const input = JSON.parse(fs.readFileSync(process.argv[2], 'utf8')) as ClientInput;
  process.stdout.write(`${JSON.stringify(measure(input))}\n`);
}

/**
 * Group membership checks of {@link MlsClient} (RFC 9420): the members a ratchet tree holds (leaf
 * `i` is node `2i`, Appendix C; basic credentials name the device), and whether a group with a
 * fixed roster (`MlsClientCommonOptions.groupRoster`) may go from one tree to another (§7.8) or
 * apply a proposal (§12.1) — refused as `membership_refused`.
 */
import type { Credential, LeafNode, ProposalWithSender, RatchetTree } from 'ts-mls';
import { utf8Decode } from './base64.js';
import type { MlsMember, MlsRosterMember } from './client-types.js';
import { MlsClientError } from './errors.js';

/** Constant-time equality of two byte strings. */

export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let d = 0;
  for (let i = 0; i < a.length; i++) d |= a[i]! ^ b[i]!;
  return d === 0;
}

/** The device id a basic credential names, or undefined (another credential type, or empty). */
export function credentialDeviceId(credential: Credential): string | undefined {
  if (credential.credentialType !== 'basic') return undefined;
  const id = utf8Decode(credential.identity);
  return id === undefined || id.length === 0 ? undefined : id;
}

/** The leaf at `leafIndex` (node `2 * leafIndex`, RFC 9420 Appendix C), undefined when blank or absent. */
export function leafAt(tree: RatchetTree, leafIndex: number | undefined): LeafNode | undefined {
  if (leafIndex === undefined) return undefined;
  const node = tree[leafIndex * 2];
  return node?.nodeType === 'leaf' ? node.leaf : undefined;
}

/** The non-blank leaves of a tree with their leaf indexes. */
export function leavesOf(tree: RatchetTree): { leafIndex: number; leaf: LeafNode }[] {
  const out: { leafIndex: number; leaf: LeafNode }[] = [];
  for (let i = 0; 2 * i < tree.length; i++) {
    const leaf = leafAt(tree, i);
    if (leaf !== undefined) out.push({ leafIndex: i, leaf });
  }
  return out;
}

/** The members of a tree, named by their basic credential (`leaf:<index>` without one). */
export function membersOf(tree: RatchetTree): MlsMember[] {
  return leavesOf(tree).map(({ leafIndex, leaf }) => ({
    deviceId: credentialDeviceId(leaf.credential) ?? `leaf:${leafIndex}`,
    leafIndex,
    signaturePublicKey: leaf.signaturePublicKey,
  }));
}

/** The device id of the leaf at `leafIndex`, or undefined (blank, absent, or not a basic credential). */
export function leafDeviceId(tree: RatchetTree, leafIndex: number | undefined): string | undefined {
  const leaf = leafAt(tree, leafIndex);
  return leaf === undefined ? undefined : credentialDeviceId(leaf.credential);
}

/** How a leaf names itself in a refusal: its device id, or its leaf index without a basic credential. */
function describeLeaf(leaf: LeafNode | undefined, leafIndex: number): string {
  const id = leaf === undefined ? undefined : credentialDeviceId(leaf.credential);
  return id === undefined ? `leaf ${leafIndex}` : `device ${id}`;
}

/** Why `leaf` may not be in a group with `roster` (a device outside it, or not its listed key), or undefined. */
function rosterProblem(roster: readonly MlsRosterMember[], leaf: LeafNode, leafIndex: number): string | undefined {
  const id = credentialDeviceId(leaf.credential);
  const entry = id === undefined ? undefined : roster.find((m) => m.deviceId === id);
  if (entry === undefined) return `${describeLeaf(leaf, leafIndex)} is not in the group's roster`;
  if (!bytesEqual(entry.signaturePublicKey, leaf.signaturePublicKey)) return `device ${id} does not carry its registered signature key`;
  return undefined;
}

/** Why `next` may not replace the member leaf `current` (another device or signature key), or undefined. */
function replacementProblem(current: LeafNode, next: LeafNode | undefined, leafIndex: number): string | undefined {
  if (next === undefined) return `${describeLeaf(current, leafIndex)} would be removed`;
  const same = credentialDeviceId(current.credential) === credentialDeviceId(next.credential) && bytesEqual(current.signaturePublicKey, next.signaturePublicKey);
  return same ? undefined : `${describeLeaf(current, leafIndex)} would be replaced by ${describeLeaf(next, leafIndex)} or another signature key`;
}

/**
 * Why a group with `roster` may not go from tree `before` to tree `after` (RFC 9420 §7.8 tree
 * states; `before` empty for a new group or a Welcome), or undefined: every leaf of `after` must be
 * a roster device with its listed key, no device twice, and every member of `before` keeps its leaf
 * with the same device and signature key.
 */
function transitionProblem(roster: readonly MlsRosterMember[], before: RatchetTree, after: RatchetTree): string | undefined {
  const seen = new Set<string>();
  for (const { leafIndex, leaf } of leavesOf(after)) {
    const problem = rosterProblem(roster, leaf, leafIndex);
    if (problem !== undefined) return problem;
    const id = credentialDeviceId(leaf.credential)!;
    if (seen.has(id)) return `device ${id} would hold two leaves`;
    seen.add(id);
  }
  for (const { leafIndex, leaf } of leavesOf(before)) {
    const problem = replacementProblem(leaf, leafAt(after, leafIndex), leafIndex);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

/**
 * Why a proposal (RFC 9420 §12.1; by value or by reference in a commit, or on its own) may not be
 * applied to a group with `roster` whose tree is `tree`, or undefined: an Add (§12.1.1) must bring
 * a roster device not yet a member, a Remove (§12.1.3) is refused, an Update (§12.1.2) must keep
 * the sender's device and signature key. Other proposal types do not change the membership.
 */
function proposalProblem(roster: readonly MlsRosterMember[], tree: RatchetTree, p: ProposalWithSender): string | undefined {
  const proposal = p.proposal;
  switch (proposal.proposalType) {
    case 'add': {
      const leaf = proposal.add.keyPackage.leafNode;
      const id = credentialDeviceId(leaf.credential);
      if (id !== undefined && membersOf(tree).some((m) => m.deviceId === id)) return `an Add of device ${id}, already a member`;
      const problem = rosterProblem(roster, leaf, tree.length);
      return problem === undefined ? undefined : `an Add: ${problem}`;
    }
    case 'remove':
      return `a Remove of ${describeLeaf(leafAt(tree, proposal.remove.removed), proposal.remove.removed)}`;
    case 'update': {
      const current = leafAt(tree, p.senderLeafIndex);
      if (current === undefined) return 'an Update from a sender without a leaf';
      const problem = replacementProblem(current, proposal.update.leafNode, p.senderLeafIndex!);
      return problem === undefined ? undefined : `an Update: ${problem}`;
    }
    default:
      return undefined;
  }
}

/** The problem of the first proposal `proposalProblem` refuses, or undefined. */
export function firstProposalProblem(roster: readonly MlsRosterMember[], tree: RatchetTree, proposals: readonly ProposalWithSender[]): string | undefined {
  for (const p of proposals) {
    const problem = proposalProblem(roster, tree, p);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

/** The `membership_refused` error of a refused change in `groupId`. */
export function membershipRefused(groupId: string, problem: string): MlsClientError {
  return new MlsClientError('membership_refused', `membership change refused in group ${groupId}: ${problem}`);
}

/** Throws `membership_refused` when a group with `roster` may not go from `before` to `after`. */
export function checkTransition(groupId: string, roster: readonly MlsRosterMember[] | undefined, before: RatchetTree, after: RatchetTree): void {
  const problem = roster === undefined ? undefined : transitionProblem(roster, before, after);
  if (problem !== undefined) throw membershipRefused(groupId, problem);
}

/**
 * The membership change of a processed commit: devices whose leaf (index and device id) is new in
 * `after`, devices whose leaf is gone from `before`, and the members after it.
 */
export function commitChanges(before: RatchetTree, after: RatchetTree): { added: string[]; removed: string[]; members: string[] } {
  const key = (m: MlsMember) => `${m.leafIndex}\u0000${m.deviceId}`;
  const beforeMembers = membersOf(before);
  const afterMembers = membersOf(after);
  const beforeKeys = new Set(beforeMembers.map(key));
  const afterKeys = new Set(afterMembers.map(key));
  return {
    added: afterMembers.filter((m) => !beforeKeys.has(key(m))).map((m) => m.deviceId),
    removed: beforeMembers.filter((m) => !afterKeys.has(key(m))).map((m) => m.deviceId),
    members: afterMembers.map((m) => m.deviceId),
  };
}

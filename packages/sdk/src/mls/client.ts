/**
 * MLS (RFC 9420) client for one Parley device, on top of ts-mls.
 *
 * Parley's server only relays opaque bytes: KeyPackages (published by each device, claimed one at a
 * time by whoever adds that device), Welcome, commit and application messages. Everything this
 * class produces and consumes is therefore an encoded MLSMessage (`Uint8Array`); see `wire.ts` for
 * the envelope that carries them in a Parley message.
 *
 * Ciphersuites (ciphersuites.ts): MLS_128_DHKEMX25519_CHACHA20POLY1305_SHA256_Ed25519 (RFC 9420
 * suite 3), and, since issue 16, the hybrid post-quantum MLS_256_XWING_CHACHA20POLY1305_SHA512_Ed25519
 * (X-Wing = X25519 + ML-KEM-768 HPKE) next to it: each KeyPackage and each group has one suite;
 * `createGroup(id, { ciphersuite })` picks it (see `chooseCiphersuite`), joins and messages follow
 * the group's. Suite 3: X25519 HPKE,
 * ChaCha20-Poly1305, SHA-256, Ed25519, i.e. the primitives contract §1.3 names for Parley. ts-mls's
 * default crypto provider serves it through the `@hpke/chacha20poly1305` and `@noble/ciphers`
 * packages the SDK already depends on (hashing and Ed25519 use WebCrypto, available in Node 20+
 * and current browsers); on Node, `parleyMlsCryptoProvider` (crypto-provider.ts) moves Ed25519 to
 * the SDK's native node:crypto provider.
 *
 * Credentials are MLS basic credentials whose identity is the UTF-8 device id. Every leaf of a device
 * uses the same Ed25519 signature key, so a relying party can check a member's signature key
 * against the device's registered identity key (see `MlsClientOptions.validateCredential`).
 *
 * A group may have a fixed roster (`MlsClientCommonOptions.groupRoster`; a 1:1 conversation's group
 * holds exactly its two devices): Welcomes, commits and proposals that would change who is in it
 * are refused (`membership_refused`) before anything is stored.
 *
 * Commits are sent as PrivateMessages (the relay does not learn who was added or removed from the
 * commit itself) and carry the ratchet tree in the Welcome's GroupInfo, so a joiner needs nothing
 * besides the Welcome.
 *
 * Operations on one client run one at a time (an internal queue), and when a store is configured the
 * whole client state is saved after every operation that changes it, before the call returns, so
 * keys consumed for forward secrecy are also gone from storage.
 */
import {
  createApplicationMessage,
  createCommit,
  createGroup as mlsCreateGroup,
  decodeGroupState,
  defaultCapabilities,
  defaultKeyPackageEqualityConfig,
  defaultKeyRetentionConfig,
  defaultLifetimeConfig,
  defaultPaddingConfig,
  emptyPskIndex,
  encodeGroupState,
  encodeMlsMessage,
  generateKeyPackageWithKey,
  joinGroup,
  makePskIndex,
  processMessage as mlsProcessMessage,
  zeroOutUint8Array,
  type AuthenticationService,
  type CiphersuiteImpl,
  type CiphersuiteName,
  type ClientConfig,
  type ClientState,
  type Credential,
  type CryptoProvider,
  type IncomingMessageCallback,
  type KeyPackage,
  type LeafNode,
  type MlsPrivateMessage,
  type MlsPublicMessage,
  type Proposal,
  type ProposalWithSender,
  type RatchetTree,
} from 'ts-mls';
// Not re-exported from the package root, but part of its published `./*.js` export map (ts-mls is
// pinned): the KeyPackageRef a Welcome addresses, KeyPackage signature check, and the sender data
// of a PrivateMessage (ts-mls does not report who sent an application message).
import { makeKeyPackageRef, verifyKeyPackage } from 'ts-mls/keyPackage.js';
import { decryptSenderData } from 'ts-mls/privateMessage.js';
import { base64ToBytes, bytesToBase64, utf8Decode, utf8Encode } from './base64.js';
import { MlsClientError } from './errors.js';
import { decodeWholeMlsMessage } from './wire.js';
import { parleyMlsCryptoProvider } from './crypto-provider.js';
import { MLS_CIPHERSUITE, MLS_SUPPORTED_CIPHERSUITES, ciphersuiteImpl, loadCiphersuites } from './ciphersuites.js';
import type { SessionStore } from '../storage.js';

export { MLS_CIPHERSUITE } from './ciphersuites.js';

/** Default KeyPackage validity: 30 days (RFC 9420 §16.8 asks for bounded lifetimes). */
export const DEFAULT_KEY_PACKAGE_LIFETIME_SECONDS = 30 * 24 * 3600;
/** KeyPackages are valid from one hour before creation, to tolerate clock skew between devices. */
const NOT_BEFORE_SKEW_SECONDS = 3600;
const MAX_KEY_PACKAGES_PER_CALL = 1000;
const STATE_FORMAT = 'parley-mls-client';

export interface Ed25519KeyPair {
  /** Raw 32-byte Ed25519 public key. */
  publicKey: Uint8Array;
  /** Raw 32-byte Ed25519 seed, or the PKCS#8 encoding WebCrypto exports. */
  signKey: Uint8Array;
}

export interface MlsClientCommonOptions {
  /**
   * Extra check of every credential MLS validates (members of a group being joined, KeyPackages
   * being added, leaf nodes in commits). Called with the device id from the basic credential and
   * the leaf's Ed25519 signature key; return false to refuse. Typically: compare the key with the
   * device's `identity_public_key` from `GET /devices/{id}/keys` (when devices use their identity
   * key as MLS signature key). Without it, any well-formed basic credential is accepted.
   */
  validateCredential?: (deviceId: string, signaturePublicKey: Uint8Array) => boolean | Promise<boolean>;
  /**
   * The fixed roster of a group whose membership the application decides (a 1:1 conversation's
   * group holds exactly its two devices), or undefined for a group without one. `validateCredential`
   * only sees a credential, not the group it is offered to; the roster binds devices to a group.
   * With a roster, every leaf of the group must be a roster device carrying its listed signature
   * key, at most one leaf per device, and a member keeps its leaf: a Welcome (RFC 9420 §12.4.3.1),
   * commit (§12.4.2) or proposal (§12.1) that would add anyone else, remove a member or replace a
   * member's device or signature key is refused with `membership_refused`, leaving the state as it
   * was. Updates that keep the device and signature key (fresh HPKE keys, §12.1.2) stay allowed.
   * Consulted when a group is created, a Welcome is joined, and a commit or proposal is created or
   * processed.
   */
  groupRoster?: (groupId: string) => readonly MlsRosterMember[] | undefined | Promise<readonly MlsRosterMember[] | undefined>;
  /**
   * Where to persist the client state after each change (one string under `storeKey`). The state
   * holds private keys (signature key, KeyPackage private keys, epoch secrets): the store must keep
   * it confidential.
   */
  store?: SessionStore;
  /** Key under which the state is saved; default `mls:<deviceId>`. */
  storeKey?: string;
  keyPackageLifetimeSeconds?: number;
  /** ts-mls crypto provider; default `parleyMlsCryptoProvider` (ts-mls's default with native Ed25519 on Node). */
  cryptoProvider?: CryptoProvider;
  /**
   * The suites this client runs (default: the hybrid X-Wing one and the classical one). The
   * classical suite is always included; a suite whose implementation cannot load is left out.
   */
  ciphersuites?: readonly CiphersuiteName[];
}

export interface MlsClientOptions extends MlsClientCommonOptions {
  deviceId: string;
  /**
   * The device's MLS signature key pair. Pass the device's Ed25519 identity key to tie MLS
   * membership to the key registered with Parley; omitted, a fresh key pair is generated (and kept
   * in the exported state).
   */
  signatureKeyPair?: Ed25519KeyPair;
}

/** A device a group's roster allows, with the signature key its leaf must carry. */
export interface MlsRosterMember {
  deviceId: string;
  /** Raw Ed25519 public key (for Parley devices, the registered identity key). */
  signaturePublicKey: Uint8Array;
}

export interface MlsMember {
  deviceId: string;
  leafIndex: number;
  signaturePublicKey: Uint8Array;
}

export interface MlsCommitResult {
  groupId: string;
  /** Encoded MLSMessage (PrivateMessage) to relay to the other members; envelope kind `commit`. */
  commit: Uint8Array;
  /** Epoch the commit was created in: the envelope epoch of the commit. */
  commitEpoch: bigint;
  /** Epoch the group is in once the commit is merged. */
  epoch: bigint;
  /** False when the commit was created with `deferMerge` and waits for `mergePendingCommit`. */
  merged: boolean;
}

export interface MlsAddMembersResult extends MlsCommitResult {
  /** Encoded MLSMessage (Welcome) for every added device; envelope kind `welcome` at `epoch`. */
  welcome: Uint8Array;
  /** Device ids of the added KeyPackages, in input order (check them against what you claimed). */
  added: string[];
}

export interface MlsRemoveMembersResult extends MlsCommitResult {
  removed: string[];
}

export interface MlsCommitOptions {
  /**
   * Do not move to the new epoch yet: keep sending and receiving in the current epoch until
   * `mergePendingCommit` is called (when the server has accepted the commit). If another member's
   * commit for the same epoch is processed first, the pending commit is dropped. While a commit is
   * pending no other commit can be created; to retry delivery, resend `pendingCommit()` bytes.
   */
  deferMerge?: boolean;
}

export interface MlsJoinResult {
  groupId: string;
  epoch: bigint;
  members: string[];
}

export type MlsProcessResult =
  | {
      kind: 'application';
      groupId: string;
      /** Epoch the message was sent in. */
      epoch: bigint;
      /** Device id of the authenticated sender. */
      sender: string;
      plaintext: Uint8Array;
    }
  | {
      kind: 'commit';
      groupId: string;
      /** Our epoch after the commit. */
      epoch: bigint;
      /** Device id of the committer (undefined for external commits). */
      sender: string | undefined;
      added: string[];
      removed: string[];
      /** True when this commit removed us: we can no longer send or read later epochs. */
      selfRemoved: boolean;
      members: string[];
    }
  | {
      kind: 'proposal';
      groupId: string;
      epoch: bigint;
      sender: string | undefined;
    };

export interface KeyPackageInfo {
  deviceId: string;
  signaturePublicKey: Uint8Array;
  cipherSuite: CiphersuiteName;
  /** Unix seconds. */
  notBefore: bigint;
  notAfter: bigint;
}

interface StoredKeyPackage {
  publicPackage: KeyPackage;
  encoded: Uint8Array;
  initPrivateKey: Uint8Array;
  hpkePrivateKey: Uint8Array;
}

interface PendingCommit {
  state: ClientState;
  consumed: Uint8Array[];
  commit: Uint8Array;
  welcome: Uint8Array | undefined;
  commitEpoch: bigint;
}

interface SerializedClient {
  format: typeof STATE_FORMAT;
  v: 1;
  deviceId: string;
  cipherSuite: CiphersuiteName;
  signaturePublicKey: string;
  signaturePrivateKey: string;
  keyPackages: { keyPackage: string; initPrivateKey: string; hpkePrivateKey: string }[];
  groups: {
    groupId: string;
    state: string;
    pending?: { state: string; commit: string; welcome?: string; commitEpoch: string };
  }[];
}


function toHex(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += b.toString(16).padStart(2, '0');
  return s;
}

function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let d = 0;
  for (let i = 0; i < a.length; i++) d |= a[i]! ^ b[i]!;
  return d === 0;
}

function credentialDeviceId(credential: Credential): string | undefined {
  if (credential.credentialType !== 'basic') return undefined;
  const id = utf8Decode(credential.identity);
  return id === undefined || id.length === 0 ? undefined : id;
}


function encodeKeyPackageMessage(kp: KeyPackage): Uint8Array {
  return encodeMlsMessage({ version: 'mls10', wireformat: 'mls_key_package', keyPackage: kp });
}

function decodeKeyPackageMessage(bytes: Uint8Array): KeyPackage {
  const msg = decodeWholeMlsMessage(bytes);
  if (msg.wireformat !== 'mls_key_package') {
    throw new MlsClientError('invalid_key_package', `expected a KeyPackage, got ${msg.wireformat}`);
  }
  return msg.keyPackage;
}

/** The leaf at `leafIndex` (node `2 * leafIndex`, RFC 9420 Appendix C), undefined when blank or absent. */
function leafAt(tree: RatchetTree, leafIndex: number | undefined): LeafNode | undefined {
  if (leafIndex === undefined) return undefined;
  const node = tree[leafIndex * 2];
  return node?.nodeType === 'leaf' ? node.leaf : undefined;
}

/** The non-blank leaves of a tree with their leaf indexes. */
function leavesOf(tree: RatchetTree): { leafIndex: number; leaf: LeafNode }[] {
  const out: { leafIndex: number; leaf: LeafNode }[] = [];
  for (let i = 0; 2 * i < tree.length; i++) {
    const leaf = leafAt(tree, i);
    if (leaf !== undefined) out.push({ leafIndex: i, leaf });
  }
  return out;
}

function membersOf(tree: RatchetTree): MlsMember[] {
  return leavesOf(tree).map(({ leafIndex, leaf }) => ({
    deviceId: credentialDeviceId(leaf.credential) ?? `leaf:${leafIndex}`,
    leafIndex,
    signaturePublicKey: leaf.signaturePublicKey,
  }));
}

function leafDeviceId(tree: RatchetTree, leafIndex: number | undefined): string | undefined {
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
function firstProposalProblem(roster: readonly MlsRosterMember[], tree: RatchetTree, proposals: readonly ProposalWithSender[]): string | undefined {
  for (const p of proposals) {
    const problem = proposalProblem(roster, tree, p);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

function membershipRefused(groupId: string, problem: string): MlsClientError {
  return new MlsClientError('membership_refused', `membership change refused in group ${groupId}: ${problem}`);
}

/** Throws `membership_refused` when a group with `roster` may not go from `before` to `after`. */
function checkTransition(groupId: string, roster: readonly MlsRosterMember[] | undefined, before: RatchetTree, after: RatchetTree): void {
  const problem = roster === undefined ? undefined : transitionProblem(roster, before, after);
  if (problem !== undefined) throw membershipRefused(groupId, problem);
}

function wipe(arrays: Uint8Array[]): void {
  for (const a of arrays) zeroOutUint8Array(a);
}

/**
 * Reads a KeyPackage (encoded MLSMessage) and verifies its signature; for the device that claims
 * one from the server, or for the server to check a published KeyPackage belongs to its publisher.
 */
export async function inspectKeyPackage(bytes: Uint8Array, cryptoProvider: CryptoProvider = parleyMlsCryptoProvider): Promise<KeyPackageInfo> {
  const kp = decodeKeyPackageMessage(bytes);
  if (!MLS_SUPPORTED_CIPHERSUITES.includes(kp.cipherSuite)) {
    throw new MlsClientError('invalid_key_package', `unsupported ciphersuite ${kp.cipherSuite}`);
  }
  const cs = await ciphersuiteImpl(cryptoProvider, kp.cipherSuite).catch((cause) => {
    throw new MlsClientError('invalid_key_package', `ciphersuite ${kp.cipherSuite} is not available here`, { cause });
  });
  const valid = await verifyKeyPackage(kp, cs.signature).catch(() => false);
  if (!valid) throw new MlsClientError('invalid_key_package', 'KeyPackage signature does not verify');
  const deviceId = credentialDeviceId(kp.leafNode.credential);
  if (deviceId === undefined) throw new MlsClientError('invalid_key_package', 'KeyPackage credential is not a basic device id');
  return {
    deviceId,
    signaturePublicKey: kp.leafNode.signaturePublicKey,
    cipherSuite: kp.cipherSuite,
    notBefore: kp.leafNode.lifetime.notBefore,
    notAfter: kp.leafNode.lifetime.notAfter,
  };
}

export class MlsClient {
  /** The classical suite: the one every client speaks, and of this client's signature key. */
  readonly ciphersuite: CiphersuiteName = MLS_CIPHERSUITE;
  /** The suites this client runs, most preferred first (the hybrid one first when it loaded). */
  readonly ciphersuites: readonly CiphersuiteName[];
  private readonly groups = new Map<string, ClientState>();
  private readonly pending = new Map<string, PendingCommit>();
  /** Private parts of published KeyPackages, by hex KeyPackageRef. */
  private readonly keyPackages = new Map<string, StoredKeyPackage>();
  private readonly clientConfig: ClientConfig;
  private readonly store: SessionStore | undefined;
  private readonly storeKey: string;
  private readonly lifetimeSeconds: number;
  private readonly rosterHook: MlsClientCommonOptions['groupRoster'];
  private queue: Promise<void> = Promise.resolve();

  private constructor(
    readonly deviceId: string,
    private readonly signature: Ed25519KeyPair,
    private readonly suites: Map<CiphersuiteName, CiphersuiteImpl>,
    options: MlsClientCommonOptions,
  ) {
    this.ciphersuites = MLS_SUPPORTED_CIPHERSUITES.filter((name) => suites.has(name));
    const hook = options.validateCredential;
    const authService: AuthenticationService = {
      async validateCredential(credential, signaturePublicKey) {
        const id = credentialDeviceId(credential);
        if (id === undefined) return false;
        return hook === undefined ? true : (await hook(id, signaturePublicKey)) === true;
      },
    };
    this.clientConfig = {
      keyRetentionConfig: defaultKeyRetentionConfig,
      lifetimeConfig: defaultLifetimeConfig,
      keyPackageEqualityConfig: defaultKeyPackageEqualityConfig,
      paddingConfig: defaultPaddingConfig,
      authService,
    };
    this.store = options.store;
    this.storeKey = options.storeKey ?? `mls:${deviceId}`;
    this.lifetimeSeconds = options.keyPackageLifetimeSeconds ?? DEFAULT_KEY_PACKAGE_LIFETIME_SECONDS;
    this.rosterHook = options.groupRoster;
    if (!Number.isSafeInteger(this.lifetimeSeconds) || this.lifetimeSeconds <= 0) {
      throw new MlsClientError('invalid_argument', 'keyPackageLifetimeSeconds must be a positive integer');
    }
  }

  /** A new client for `deviceId`; saved to `options.store` when one is given. */
  static async create(options: MlsClientOptions): Promise<MlsClient> {
    if (typeof options.deviceId !== 'string' || options.deviceId.length === 0) {
      throw new MlsClientError('invalid_argument', 'deviceId must be a non-empty string');
    }
    const suites = await loadCiphersuites(options.cryptoProvider ?? parleyMlsCryptoProvider, options.ciphersuites ?? MLS_SUPPORTED_CIPHERSUITES);
    const cs = suites.get(MLS_CIPHERSUITE)!;
    let signature = options.signatureKeyPair;
    if (signature === undefined) {
      signature = await cs.signature.keygen();
    } else {
      signature = { publicKey: signature.publicKey.slice(), signKey: signature.signKey.slice() };
      await MlsClient.checkKeyPair(cs, signature);
    }
    const client = new MlsClient(options.deviceId, signature, suites, options);
    await client.persist();
    return client;
  }

  /** Restores a client from `exportState()` output. */
  static async importState(serialized: string, options: MlsClientCommonOptions = {}): Promise<MlsClient> {
    let data: SerializedClient;
    try {
      data = JSON.parse(serialized) as SerializedClient;
    } catch (cause) {
      throw new MlsClientError('invalid_state', 'MLS state is not JSON', { cause });
    }
    if (data === null || typeof data !== 'object' || data.format !== STATE_FORMAT || data.v !== 1) {
      throw new MlsClientError('invalid_state', 'not a Parley MLS client state (v1)');
    }
    if (data.cipherSuite !== MLS_CIPHERSUITE) {
      throw new MlsClientError('invalid_state', `unsupported ciphersuite ${String(data.cipherSuite)}`);
    }
    if (typeof data.deviceId !== 'string' || data.deviceId.length === 0) {
      throw new MlsClientError('invalid_state', 'deviceId missing');
    }
    const suites = await loadCiphersuites(options.cryptoProvider ?? parleyMlsCryptoProvider, options.ciphersuites ?? MLS_SUPPORTED_CIPHERSUITES);
    try {
      const signature = {
        publicKey: base64ToBytes(data.signaturePublicKey),
        signKey: base64ToBytes(data.signaturePrivateKey),
      };
      const client = new MlsClient(data.deviceId, signature, suites, options);
      for (const k of data.keyPackages) {
        const encoded = base64ToBytes(k.keyPackage);
        const publicPackage = decodeKeyPackageMessage(encoded);
        const ref = toHex(await makeKeyPackageRef(publicPackage, client.impl(publicPackage.cipherSuite, 'invalid_state').hash));
        client.keyPackages.set(ref, {
          publicPackage,
          encoded,
          initPrivateKey: base64ToBytes(k.initPrivateKey),
          hpkePrivateKey: base64ToBytes(k.hpkePrivateKey),
        });
      }
      for (const g of data.groups) {
        client.groups.set(g.groupId, client.decodeState(g.state));
        if (g.pending !== undefined) {
          client.pending.set(g.groupId, {
            state: client.decodeState(g.pending.state),
            consumed: [],
            commit: base64ToBytes(g.pending.commit),
            welcome: g.pending.welcome === undefined ? undefined : base64ToBytes(g.pending.welcome),
            commitEpoch: BigInt(g.pending.commitEpoch),
          });
        }
      }
      return client;
    } catch (cause) {
      if (cause instanceof MlsClientError) throw cause;
      throw new MlsClientError('invalid_state', 'corrupt MLS client state', { cause });
    }
  }

  /** Loads the client saved in `store` (under `storeKey`, default `mls:<deviceId>`), or undefined. */
  static async load(store: SessionStore, deviceId: string, options: Omit<MlsClientCommonOptions, 'store'> = {}): Promise<MlsClient | undefined> {
    const serialized = await store.load(options.storeKey ?? `mls:${deviceId}`);
    if (serialized === undefined) return undefined;
    const client = await MlsClient.importState(serialized, { ...options, store });
    if (client.deviceId !== deviceId) throw new MlsClientError('invalid_state', 'stored MLS state belongs to another device');
    return client;
  }

  private static async checkKeyPair(cs: CiphersuiteImpl, kp: Ed25519KeyPair): Promise<void> {
    const probe = utf8Encode('parley mls signature key check');
    const ok = await cs.signature
      .sign(kp.signKey, probe)
      .then((sig) => cs.signature.verify(kp.publicKey, probe, sig))
      .catch(() => false);
    if (!ok) throw new MlsClientError('invalid_argument', 'signatureKeyPair is not a matching Ed25519 key pair');
  }

  // ---------------------------------------------------------------- accessors

  get signaturePublicKey(): Uint8Array {
    return this.signature.publicKey.slice();
  }

  groupIds(): string[] {
    return [...this.groups.keys()];
  }

  hasGroup(groupId: string): boolean {
    return this.groups.has(groupId);
  }

  /** False once we were removed from the group (the state is kept to read its last epoch). */
  isActive(groupId: string): boolean {
    return this.requireGroup(groupId).groupActiveState.kind === 'active';
  }

  epoch(groupId: string): bigint {
    return this.requireGroup(groupId).groupContext.epoch;
  }

  members(groupId: string): MlsMember[] {
    return membersOf(this.requireGroup(groupId).ratchetTree);
  }

  memberIds(groupId: string): string[] {
    return this.members(groupId).map((m) => m.deviceId);
  }

  /** Number of KeyPackages generated and not yet used by a Welcome (of `ciphersuite` only, when given). */
  keyPackageCount(ciphersuite?: CiphersuiteName): number {
    if (ciphersuite === undefined) return this.keyPackages.size;
    let n = 0;
    for (const k of this.keyPackages.values()) if (k.publicPackage.cipherSuite === ciphersuite) n++;
    return n;
  }

  /** The suite of a group this client holds. */
  groupCiphersuite(groupId: string): CiphersuiteName {
    return this.requireGroup(groupId).groupContext.cipherSuite;
  }

  /** The commit (and Welcome) waiting for `mergePendingCommit`, e.g. to resend it. */
  pendingCommit(groupId: string): { commit: Uint8Array; welcome: Uint8Array | undefined; commitEpoch: bigint } | undefined {
    const p = this.pending.get(groupId);
    return p === undefined ? undefined : { commit: p.commit.slice(), welcome: p.welcome?.slice(), commitEpoch: p.commitEpoch };
  }

  // ---------------------------------------------------------------- operations

  /**
   * Creates `n` one-time KeyPackages of `ciphersuite` (default the classical one) to publish;
   * returns their encodings (MLSMessage with wire format mls_key_package). The private parts stay
   * in this client until a Welcome uses them.
   * @throws MlsClientError `invalid_argument` for a bad `n` or a suite this client does not run.
   */
  generateKeyPackages(n: number, ciphersuite: CiphersuiteName = MLS_CIPHERSUITE): Promise<Uint8Array[]> {
    return this.exclusive(async () => {
      if (!Number.isSafeInteger(n) || n < 1 || n > MAX_KEY_PACKAGES_PER_CALL) {
        throw new MlsClientError('invalid_argument', `n must be an integer between 1 and ${MAX_KEY_PACKAGES_PER_CALL}`);
      }
      const impl = this.impl(ciphersuite, 'invalid_argument');
      const out: Uint8Array[] = [];
      for (let i = 0; i < n; i++) {
        const kp = await this.newKeyPackage(impl);
        const ref = toHex(await makeKeyPackageRef(kp.publicPackage, impl.hash));
        this.keyPackages.set(ref, kp);
        out.push(kp.encoded.slice());
      }
      await this.persist();
      return out;
    });
  }

  /**
   * Creates a group with this device as its only member, at epoch 0, in `options.ciphersuite`
   * (default the classical suite; pick with `chooseCiphersuite` from what the members offer). Every
   * member added later needs a KeyPackage of that suite.
   */
  createGroup(groupId: string, options: { ciphersuite?: CiphersuiteName } = {}): Promise<{ groupId: string; epoch: bigint; ciphersuite: CiphersuiteName }> {
    return this.exclusive(async () => {
      if (typeof groupId !== 'string' || groupId.length === 0) {
        throw new MlsClientError('invalid_argument', 'groupId must be a non-empty string');
      }
      if (this.groups.has(groupId)) throw new MlsClientError('group_exists', `group ${groupId} already exists`);
      const ciphersuite = options.ciphersuite ?? MLS_CIPHERSUITE;
      const impl = this.impl(ciphersuite, 'invalid_argument');
      const kp = await this.newKeyPackage(impl);
      const state = await mlsCreateGroup(
        utf8Encode(groupId),
        kp.publicPackage,
        { initPrivateKey: kp.initPrivateKey, hpkePrivateKey: kp.hpkePrivateKey, signaturePrivateKey: this.signature.signKey },
        [],
        impl,
        this.clientConfig,
      );
      zeroOutUint8Array(kp.initPrivateKey);
      checkTransition(groupId, await this.roster(groupId), [], state.ratchetTree);
      this.groups.set(groupId, state);
      await this.persist();
      return { groupId, epoch: state.groupContext.epoch, ciphersuite };
    });
  }

  /**
   * Adds the devices whose KeyPackages (as claimed from the server) are given, in one commit.
   * Relay `commit` to the current members and `welcome` to the added devices.
   */
  addMembers(groupId: string, keyPackages: Uint8Array[], options: MlsCommitOptions = {}): Promise<MlsAddMembersResult> {
    return this.exclusive(async () => {
      const state = this.requireActive(groupId);
      if (!Array.isArray(keyPackages) || keyPackages.length === 0) {
        throw new MlsClientError('invalid_argument', 'at least one KeyPackage is required');
      }
      const present = new Set(membersOf(state.ratchetTree).map((m) => m.deviceId));
      const added: string[] = [];
      const proposals: Proposal[] = [];
      for (const bytes of keyPackages) {
        const kp = decodeKeyPackageMessage(bytes);
        if (kp.cipherSuite !== state.groupContext.cipherSuite) {
          throw new MlsClientError('invalid_key_package', `KeyPackage of ciphersuite ${kp.cipherSuite} for a group of ${state.groupContext.cipherSuite}`);
        }
        const deviceId = credentialDeviceId(kp.leafNode.credential);
        if (deviceId === undefined) throw new MlsClientError('invalid_key_package', 'KeyPackage credential is not a basic device id');
        if (!(await verifyKeyPackage(kp, this.csOf(state).signature).catch(() => false))) {
          throw new MlsClientError('invalid_key_package', `KeyPackage of ${deviceId} has an invalid signature`);
        }
        const now = BigInt(Math.floor(Date.now() / 1000));
        if (kp.leafNode.lifetime.notBefore > now || kp.leafNode.lifetime.notAfter < now) {
          throw new MlsClientError('invalid_key_package', `KeyPackage of ${deviceId} is expired or not yet valid`);
        }
        if (!(await this.clientConfig.authService.validateCredential(kp.leafNode.credential, kp.leafNode.signaturePublicKey))) {
          throw new MlsClientError('invalid_key_package', `credential of ${deviceId} refused by validateCredential`);
        }
        if (present.has(deviceId)) throw new MlsClientError('duplicate_member', `${deviceId} is already a member or listed twice`);
        present.add(deviceId);
        added.push(deviceId);
        proposals.push({ proposalType: 'add', add: { keyPackage: kp } });
      }
      const result = await this.commit(groupId, state, proposals, options);
      if (result.welcome === undefined) throw new MlsClientError('invalid_state', 'commit produced no Welcome');
      return { ...result, welcome: result.welcome, added };
    });
  }

  /** Removes every leaf of each listed device in one commit; relay `commit` to all members (including the removed). */
  removeMembers(groupId: string, deviceIds: string[], options: MlsCommitOptions = {}): Promise<MlsRemoveMembersResult> {
    return this.exclusive(async () => {
      const state = this.requireActive(groupId);
      if (!Array.isArray(deviceIds) || deviceIds.length === 0) {
        throw new MlsClientError('invalid_argument', 'at least one device id is required');
      }
      const members = membersOf(state.ratchetTree);
      const proposals: Proposal[] = [];
      for (const deviceId of new Set(deviceIds)) {
        if (deviceId === this.deviceId) throw new MlsClientError('cannot_remove_self', 'a member cannot commit its own removal');
        const leaves = members.filter((m) => m.deviceId === deviceId);
        if (leaves.length === 0) throw new MlsClientError('not_member', `${deviceId} is not a member of ${groupId}`);
        for (const leaf of leaves) proposals.push({ proposalType: 'remove', remove: { removed: leaf.leafIndex } });
      }
      const result = await this.commit(groupId, state, proposals, options);
      return { ...result, removed: [...new Set(deviceIds)] };
    });
  }

  removeMember(groupId: string, deviceId: string, options: MlsCommitOptions = {}): Promise<MlsRemoveMembersResult> {
    return this.removeMembers(groupId, [deviceId], options);
  }

  /** An empty commit that refreshes this device's leaf and path keys (post-compromise security). */
  updateKeys(groupId: string, options: MlsCommitOptions = {}): Promise<MlsCommitResult> {
    return this.exclusive(async () => {
      const state = this.requireActive(groupId);
      const { welcome: _welcome, ...result } = await this.commit(groupId, state, [], options);
      return result;
    });
  }

  /** Moves to the epoch of the commit created with `deferMerge` (once the server accepted it). */
  mergePendingCommit(groupId: string): Promise<{ epoch: bigint }> {
    return this.exclusive(async () => {
      const current = this.requireGroup(groupId);
      const p = this.pending.get(groupId);
      if (p === undefined) throw new MlsClientError('no_pending_commit', `no pending commit for ${groupId}`);
      // Application messages of the old epoch were still processed while the commit was pending:
      // keep the old epoch's receiver keys as they are now, not as they were at commit time.
      const historical = new Map(p.state.historicalReceiverData);
      const old = historical.get(current.groupContext.epoch);
      if (old !== undefined) historical.set(current.groupContext.epoch, { ...old, secretTree: current.secretTree });
      const merged: ClientState = { ...p.state, historicalReceiverData: historical };
      this.pending.delete(groupId);
      this.groups.set(groupId, merged);
      wipe(p.consumed);
      await this.persist();
      return { epoch: merged.groupContext.epoch };
    });
  }

  /** Joins the group a Welcome invites us to, with the KeyPackage it was made for (then forgotten). */
  joinFromWelcome(welcome: Uint8Array): Promise<MlsJoinResult> {
    return this.exclusive(async () => {
      const msg = decodeWholeMlsMessage(welcome);
      if (msg.wireformat !== 'mls_welcome') throw new MlsClientError('malformed_message', `expected a Welcome, got ${msg.wireformat}`);
      if (!this.suites.has(msg.welcome.cipherSuite)) {
        throw new MlsClientError('rejected_message', `unsupported ciphersuite ${msg.welcome.cipherSuite}`);
      }
      let ref: string | undefined;
      for (const s of msg.welcome.secrets) {
        const candidate = toHex(s.newMember);
        if (this.keyPackages.has(candidate)) {
          ref = candidate;
          break;
        }
      }
      if (ref === undefined) throw new MlsClientError('no_matching_key_package', 'the Welcome is not for any of our KeyPackages');
      const kp = this.keyPackages.get(ref)!;
      let state: ClientState;
      try {
        state = await joinGroup(
          msg.welcome,
          kp.publicPackage,
          { initPrivateKey: kp.initPrivateKey, hpkePrivateKey: kp.hpkePrivateKey, signaturePrivateKey: this.signature.signKey },
          emptyPskIndex,
          this.impl(msg.welcome.cipherSuite, 'rejected_message'),
          undefined,
          undefined,
          this.clientConfig,
        );
      } catch (cause) {
        throw new MlsClientError('rejected_message', 'Welcome refused', { cause });
      }
      const groupId = utf8Decode(state.groupContext.groupId);
      if (groupId === undefined || groupId.length === 0) {
        throw new MlsClientError('rejected_message', 'group id is not a UTF-8 string');
      }
      const existing = this.groups.get(groupId);
      if (existing !== undefined && existing.groupActiveState.kind === 'active') {
        throw new MlsClientError('group_exists', `already a member of ${groupId}`);
      }
      checkTransition(groupId, await this.roster(groupId), [], state.ratchetTree);
      this.keyPackages.delete(ref);
      zeroOutUint8Array(kp.initPrivateKey);
      this.pending.delete(groupId);
      this.groups.set(groupId, state);
      await this.persist();
      return { groupId, epoch: state.groupContext.epoch, members: membersOf(state.ratchetTree).map((m) => m.deviceId) };
    });
  }

  /** Encrypts application data for the group's current epoch; returns the encoded PrivateMessage. */
  encrypt(groupId: string, plaintext: Uint8Array | string): Promise<Uint8Array> {
    return this.exclusive(async () => {
      const state = this.requireActive(groupId);
      const data = typeof plaintext === 'string' ? utf8Encode(plaintext) : plaintext;
      if (!(data instanceof Uint8Array)) throw new MlsClientError('invalid_argument', 'plaintext must be bytes or a string');
      const result = await createApplicationMessage(state, data, this.csOf(state));
      this.groups.set(groupId, result.newState);
      wipe(result.consumed);
      await this.persist();
      return encodeMlsMessage({ version: 'mls10', wireformat: 'mls_private_message', privateMessage: result.privateMessage });
    });
  }

  /**
   * Processes a commit, proposal or application message received for `groupId`. Messages must be
   * processed in the order the server delivered them; a message this device sent itself cannot be
   * processed (skip it by sender_device_id). Failures leave the group state unchanged.
   */
  processMessage(groupId: string, bytes: Uint8Array): Promise<MlsProcessResult> {
    return this.exclusive(async () => {
      const state = this.requireGroup(groupId);
      const msg = decodeWholeMlsMessage(bytes);
      if (msg.wireformat !== 'mls_private_message' && msg.wireformat !== 'mls_public_message') {
        throw new MlsClientError('malformed_message', `expected a group message, got ${msg.wireformat}`);
      }
      const framed = msg.wireformat === 'mls_private_message'
        ? { groupId: msg.privateMessage.groupId, epoch: msg.privateMessage.epoch, contentType: msg.privateMessage.contentType }
        : { groupId: msg.publicMessage.content.groupId, epoch: msg.publicMessage.content.epoch, contentType: msg.publicMessage.content.contentType };
      if (!bytesEqual(framed.groupId, state.groupContext.groupId)) {
        throw new MlsClientError('wrong_group', `message is not for group ${groupId}`);
      }
      const current = state.groupContext.epoch;
      if (framed.epoch > current) {
        if (state.groupActiveState.kind === 'removedFromGroup') {
          throw new MlsClientError('inactive_group', 'removed from the group: later epochs are unreadable');
        }
        throw new MlsClientError('epoch_ahead', `message is for epoch ${framed.epoch}, we are at ${current}`);
      }
      if (framed.epoch < current && (framed.contentType !== 'application' || !state.historicalReceiverData.has(framed.epoch))) {
        throw new MlsClientError('epoch_too_old', `message is for epoch ${framed.epoch}, we are at ${current}`);
      }

      const roster = await this.roster(groupId);
      let handshakeSender: number | undefined;
      let refusal: string | undefined;
      // Called with a commit's proposals before they are applied, or with a lone proposal (RFC 9420 §12.4.2, §12.1).
      const callback: IncomingMessageCallback = (incoming) => {
        handshakeSender = incoming.kind === 'commit' ? incoming.senderLeafIndex : incoming.proposal.senderLeafIndex;
        const proposals = incoming.kind === 'commit' ? incoming.proposals : [incoming.proposal];
        refusal = roster === undefined ? undefined : firstProposalProblem(roster, state.ratchetTree, proposals);
        return refusal === undefined ? 'accept' : 'reject';
      };
      let result;
      try {
        result = await mlsProcessMessage(msg as MlsPrivateMessage | MlsPublicMessage, state, makePskIndex(state, {}), callback, this.csOf(state));
      } catch (cause) {
        throw new MlsClientError('rejected_message', 'message refused (authentication, decryption or validation failed)', { cause });
      }
      // A refused or out-of-roster change: keep the state as it was (the handshake key is not consumed).
      if (refusal !== undefined) throw membershipRefused(groupId, refusal);
      if (result.kind === 'newState') checkTransition(groupId, roster, state.ratchetTree, result.newState.ratchetTree);

      if (result.kind === 'applicationMessage') {
        if (msg.wireformat !== 'mls_private_message') throw new MlsClientError('rejected_message', 'application data must be encrypted');
        const sender = await this.applicationSender(state, msg);
        this.groups.set(groupId, result.newState);
        wipe(result.consumed);
        await this.persist();
        return { kind: 'application', groupId, epoch: framed.epoch, sender, plaintext: result.message };
      }

      const after = result.newState;
      this.groups.set(groupId, after);
      if (framed.contentType === 'commit') {
        // A commit for this epoch won over any commit of ours still waiting to be merged.
        this.pending.delete(groupId);
        wipe(result.consumed);
        await this.persist();
        const key = (m: MlsMember) => `${m.leafIndex}\u0000${m.deviceId}`;
        const beforeMembers = membersOf(state.ratchetTree);
        const afterMembers = membersOf(after.ratchetTree);
        const beforeKeys = new Set(beforeMembers.map(key));
        const afterKeys = new Set(afterMembers.map(key));
        return {
          kind: 'commit',
          groupId,
          epoch: after.groupContext.epoch,
          sender: leafDeviceId(state.ratchetTree, handshakeSender),
          added: afterMembers.filter((m) => !beforeKeys.has(key(m))).map((m) => m.deviceId),
          removed: beforeMembers.filter((m) => !afterKeys.has(key(m))).map((m) => m.deviceId),
          selfRemoved: after.groupActiveState.kind === 'removedFromGroup',
          members: afterMembers.map((m) => m.deviceId),
        };
      }
      wipe(result.consumed);
      await this.persist();
      return { kind: 'proposal', groupId, epoch: after.groupContext.epoch, sender: leafDeviceId(state.ratchetTree, handshakeSender) };
    });
  }

  /** Forgets a group (e.g. after being removed). */
  deleteGroup(groupId: string): Promise<void> {
    return this.exclusive(async () => {
      this.groups.delete(groupId);
      this.pending.delete(groupId);
      await this.persist();
    });
  }

  // ---------------------------------------------------------------- persistence

  /**
   * The whole client (signature key, unused KeyPackage private keys, group states) as a string.
   * It contains private keys: store it confidentially. After `encrypt`/`processMessage`, an older
   * export still holds the keys those calls deleted, so overwrite it rather than keep copies.
   */
  exportState(): string {
    const data: SerializedClient = {
      format: STATE_FORMAT,
      v: 1,
      deviceId: this.deviceId,
      cipherSuite: MLS_CIPHERSUITE,
      signaturePublicKey: bytesToBase64(this.signature.publicKey),
      signaturePrivateKey: bytesToBase64(this.signature.signKey),
      keyPackages: [...this.keyPackages.values()].map((k) => ({
        keyPackage: bytesToBase64(k.encoded),
        initPrivateKey: bytesToBase64(k.initPrivateKey),
        hpkePrivateKey: bytesToBase64(k.hpkePrivateKey),
      })),
      groups: [...this.groups.entries()].map(([groupId, state]) => {
        const p = this.pending.get(groupId);
        return {
          groupId,
          state: bytesToBase64(encodeGroupState(state)),
          ...(p === undefined
            ? {}
            : {
                pending: {
                  state: bytesToBase64(encodeGroupState(p.state)),
                  commit: bytesToBase64(p.commit),
                  ...(p.welcome === undefined ? {} : { welcome: bytesToBase64(p.welcome) }),
                  commitEpoch: p.commitEpoch.toString(),
                },
              }),
        };
      }),
    };
    return JSON.stringify(data);
  }

  /** Saves the state to the configured store now (operations already do this). */
  save(): Promise<void> {
    return this.exclusive(() => this.persist());
  }

  // ---------------------------------------------------------------- internals

  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn);
    this.queue = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  private async persist(): Promise<void> {
    if (this.store !== undefined) await this.store.save(this.storeKey, this.exportState());
  }

  private decodeState(b64: string): ClientState {
    const bytes = base64ToBytes(b64);
    const decoded = decodeGroupState(bytes, 0);
    if (decoded === undefined || decoded[1] !== bytes.length) throw new MlsClientError('invalid_state', 'corrupt group state');
    const state: ClientState = { ...decoded[0], clientConfig: this.clientConfig };
    if (!this.suites.has(state.groupContext.cipherSuite)) throw new MlsClientError('invalid_state', `group state uses ciphersuite ${state.groupContext.cipherSuite}, not run here`);
    return state;
  }

  private requireGroup(groupId: string): ClientState {
    const state = this.groups.get(groupId);
    if (state === undefined) throw new MlsClientError('unknown_group', `no MLS group ${groupId}`);
    return state;
  }

  private requireActive(groupId: string): ClientState {
    const state = this.requireGroup(groupId);
    if (state.groupActiveState.kind !== 'active') {
      throw new MlsClientError('inactive_group', `group ${groupId} is ${state.groupActiveState.kind}`);
    }
    return state;
  }

  /** The implementation of a suite this client runs; `code` names the error otherwise. */
  private impl(name: CiphersuiteName, code: 'invalid_argument' | 'invalid_state' | 'rejected_message'): CiphersuiteImpl {
    const impl = this.suites.get(name);
    if (impl === undefined) throw new MlsClientError(code, `ciphersuite ${name} is not run by this client`);
    return impl;
  }

  /** The implementation of a group's suite. */
  private csOf(state: ClientState): CiphersuiteImpl {
    return this.impl(state.groupContext.cipherSuite, 'invalid_state');
  }

  /** The group's roster from `MlsClientCommonOptions.groupRoster`, or undefined without one. */
  private async roster(groupId: string): Promise<readonly MlsRosterMember[] | undefined> {
    return this.rosterHook === undefined ? undefined : await this.rosterHook(groupId);
  }

  private async newKeyPackage(impl: CiphersuiteImpl): Promise<StoredKeyPackage> {
    const now = Math.floor(Date.now() / 1000);
    const { publicPackage, privatePackage } = await generateKeyPackageWithKey(
      { credentialType: 'basic', identity: utf8Encode(this.deviceId) },
      defaultCapabilities(),
      { notBefore: BigInt(now - NOT_BEFORE_SKEW_SECONDS), notAfter: BigInt(now + this.lifetimeSeconds) },
      [],
      this.signature,
      impl,
    );
    return {
      publicPackage,
      encoded: encodeKeyPackageMessage(publicPackage),
      initPrivateKey: privatePackage.initPrivateKey,
      hpkePrivateKey: privatePackage.hpkePrivateKey,
    };
  }

  private async commit(
    groupId: string,
    state: ClientState,
    proposals: Proposal[],
    options: MlsCommitOptions,
  ): Promise<MlsCommitResult & { welcome: Uint8Array | undefined }> {
    if (this.pending.has(groupId)) {
      throw new MlsClientError('invalid_state', `a commit for ${groupId} is pending: merge it or process the competing commit first`);
    }
    let result;
    try {
      result = await createCommit(
        { state, cipherSuite: this.csOf(state), pskIndex: makePskIndex(state, {}) },
        { extraProposals: proposals, ratchetTreeExtension: true },
      );
    } catch (cause) {
      throw new MlsClientError('invalid_state', 'could not create the commit', { cause });
    }
    checkTransition(groupId, await this.roster(groupId), state.ratchetTree, result.newState.ratchetTree);
    const commit = encodeMlsMessage(result.commit);
    const welcome =
      result.welcome === undefined ? undefined : encodeMlsMessage({ version: 'mls10', wireformat: 'mls_welcome', welcome: result.welcome });
    const commitEpoch = state.groupContext.epoch;
    const epoch = result.newState.groupContext.epoch;
    if (options.deferMerge === true) {
      this.pending.set(groupId, { state: result.newState, consumed: result.consumed, commit, welcome, commitEpoch });
    } else {
      this.groups.set(groupId, result.newState);
      wipe(result.consumed);
    }
    await this.persist();
    return { groupId, commit, welcome, commitEpoch, epoch, merged: options.deferMerge !== true };
  }

  /** The authenticated sender of a processed application message, from its sender data. */
  private async applicationSender(state: ClientState, msg: MlsPrivateMessage): Promise<string> {
    const pm = msg.privateMessage;
    const receiver =
      pm.epoch === state.groupContext.epoch
        ? { senderDataSecret: state.keySchedule.senderDataSecret, ratchetTree: state.ratchetTree }
        : state.historicalReceiverData.get(pm.epoch);
    const senderData = receiver === undefined ? undefined : await decryptSenderData(pm, receiver.senderDataSecret, this.csOf(state));
    const id = senderData === undefined || receiver === undefined ? undefined : leafDeviceId(receiver.ratchetTree, senderData.leafIndex);
    if (id === undefined) throw new MlsClientError('rejected_message', 'cannot identify the sender');
    return id;
  }
}

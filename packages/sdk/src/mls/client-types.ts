/**
 * The public option and result types of `MlsClient` (`client.ts`): its options (signature
 * key pair, credential check, group roster, store, lifetimes, suites), and what its operations
 * answer (commits, Welcomes, joins, processed messages, KeyPackage inspection). RFC 9420 names.
 */
import type { CiphersuiteName, CryptoProvider } from 'ts-mls';
import type { SessionStore } from '../storage.js';

/** Default KeyPackage validity: 30 days (RFC 9420 §16.8 asks for bounded lifetimes). */
export const DEFAULT_KEY_PACKAGE_LIFETIME_SECONDS = 30 * 24 * 3600;

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

/**
 * MLS (RFC 9420) client for one Parley device, on top of ts-mls.
 *
 * Parley's server only relays opaque bytes: KeyPackages (published by each device, claimed one at a
 * time by whoever adds that device), Welcome, commit and application messages. Everything this
 * class produces and consumes is therefore an encoded MLSMessage (`Uint8Array`); see `wire.ts` for
 * the envelope that carries them in a Parley message.
 *
 * Ciphersuites (ciphersuites.ts): MLS_128_DHKEMX25519_CHACHA20POLY1305_SHA256_Ed25519 (RFC 9420
 * suite 3), and the hybrid post-quantum MLS_256_XWING_CHACHA20POLY1305_SHA512_Ed25519
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
 * Parts: options and results (`client-types.ts`), KeyPackages (`key-packages.ts`), roster checks
 * (`roster.ts`), received-message checks (`incoming.ts`), the saved state (`client-state.ts`).
 *
 * Operations on one client run one at a time (an internal queue), and when a store is configured the
 * whole client state is saved after every operation that changes it, before the call returns, so
 * keys consumed for forward secrecy are also gone from storage.
 */
import {
  createApplicationMessage,
  createCommit,
  createGroup as mlsCreateGroup,
  emptyPskIndex,
  encodeMlsMessage,
  joinGroup,
  makePskIndex,
  processMessage as mlsProcessMessage,
  zeroOutUint8Array,
  type CiphersuiteImpl,
  type CiphersuiteName,
  type ClientConfig,
  type ClientState,
  type IncomingMessageCallback,
  type Proposal,
} from 'ts-mls';
// Not re-exported from the package root, but part of its published `./*.js` export map (ts-mls is
// pinned): the KeyPackageRef a Welcome addresses.
import { makeKeyPackageRef } from 'ts-mls/keyPackage.js';
import { base64ToBytes, utf8Decode, utf8Encode } from './base64.js';
import { MlsClientError } from './errors.js';
import { decodeWholeMlsMessage } from './wire.js';
import { parleyMlsCryptoProvider } from './crypto-provider.js';
import { MLS_CIPHERSUITE, MLS_SUPPORTED_CIPHERSUITES, loadCiphersuites } from './ciphersuites.js';
import {
  DEFAULT_KEY_PACKAGE_LIFETIME_SECONDS,
  type Ed25519KeyPair,
  type MlsAddMembersResult,
  type MlsClientCommonOptions,
  type MlsClientOptions,
  type MlsCommitOptions,
  type MlsCommitResult,
  type MlsJoinResult,
  type MlsMember,
  type MlsProcessResult,
  type MlsRemoveMembersResult,
  type MlsRosterMember,
} from './client-types.js';
import { decodeClientState, mergedState, mlsClientConfig, parseSerializedClient, restoreKeyPackage, restorePendingCommit, serializeClient, type PendingCommit } from './client-state.js';
import { applicationSender, checkFraming } from './incoming.js';
import { checkAddedKeyPackage, checkSignatureKeyPair, newKeyPackage, toHex, type StoredKeyPackage } from './key-packages.js';
import { checkTransition, commitChanges, firstProposalProblem, leafDeviceId, membershipRefused, membersOf } from './roster.js';
import type { SessionStore } from '../storage.js';

export { MLS_CIPHERSUITE } from './ciphersuites.js';

const MAX_KEY_PACKAGES_PER_CALL = 1000;

function wipe(arrays: Uint8Array[]): void {
  for (const a of arrays) zeroOutUint8Array(a);
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
    this.clientConfig = mlsClientConfig(options.validateCredential);
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
      await checkSignatureKeyPair(cs, signature);
    }
    const client = new MlsClient(options.deviceId, signature, suites, options);
    await client.persist();
    return client;
  }

  /** Restores a client from `exportState()` output. */
  static async importState(serialized: string, options: MlsClientCommonOptions = {}): Promise<MlsClient> {
    const data = parseSerializedClient(serialized);
    const suites = await loadCiphersuites(options.cryptoProvider ?? parleyMlsCryptoProvider, options.ciphersuites ?? MLS_SUPPORTED_CIPHERSUITES);
    try {
      const signature = {
        publicKey: base64ToBytes(data.signaturePublicKey),
        signKey: base64ToBytes(data.signaturePrivateKey),
      };
      const client = new MlsClient(data.deviceId, signature, suites, options);
      for (const k of data.keyPackages) {
        const [ref, kp] = await restoreKeyPackage(k, (suite) => client.impl(suite, 'invalid_state'));
        client.keyPackages.set(ref, kp);
      }
      for (const g of data.groups) {
        client.groups.set(g.groupId, client.decodeState(g.state));
        if (g.pending !== undefined) client.pending.set(g.groupId, restorePendingCommit(g.pending, client.decodeState(g.pending.state)));
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
        const { kp, deviceId } = await checkAddedKeyPackage(bytes, state, this.csOf(state), this.clientConfig.authService);
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
      const merged = mergedState(current, p);
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
      const ref = msg.welcome.secrets.map((s) => toHex(s.newMember)).find((candidate) => this.keyPackages.has(candidate));
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
      const { message: msg, framed } = checkFraming(groupId, state, decodeWholeMlsMessage(bytes));

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
        result = await mlsProcessMessage(msg, state, makePskIndex(state, {}), callback, this.csOf(state));
      } catch (cause) {
        throw new MlsClientError('rejected_message', 'message refused (authentication, decryption or validation failed)', { cause });
      }
      // A refused or out-of-roster change: keep the state as it was (the handshake key is not consumed).
      if (refusal !== undefined) throw membershipRefused(groupId, refusal);
      if (result.kind === 'newState') checkTransition(groupId, roster, state.ratchetTree, result.newState.ratchetTree);

      if (result.kind === 'applicationMessage') {
        if (msg.wireformat !== 'mls_private_message') throw new MlsClientError('rejected_message', 'application data must be encrypted');
        const sender = await applicationSender(state, msg, this.csOf(state));
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
        const { added, removed, members } = commitChanges(state.ratchetTree, after.ratchetTree);
        return {
          kind: 'commit',
          groupId,
          epoch: after.groupContext.epoch,
          sender: leafDeviceId(state.ratchetTree, handshakeSender),
          added,
          removed,
          selfRemoved: after.groupActiveState.kind === 'removedFromGroup',
          members,
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
    return serializeClient(this.deviceId, this.signature, this.keyPackages.values(), this.groups.entries(), this.pending);
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
    return decodeClientState(b64, this.clientConfig, this.suites);
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

  private newKeyPackage(impl: CiphersuiteImpl): Promise<StoredKeyPackage> {
    return newKeyPackage(this.deviceId, this.signature, this.lifetimeSeconds, impl);
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
}

/**
 * The durable state of a {@link SecureMessenger} (`messenger.ts`; contract §4.5): its conversations,
 * handled message refs, pending inbox, MLS client and X25519 prekeys, the lock every change runs
 * under, and the write that saves all of it as one document (`state.ts`) before anything depends
 * on it. A failed write rolls the memory back to the last saved state and stops the messenger
 * (`failed`), exactly what a crash would leave. A change that guards nothing (a delivered message
 * leaving the pending list) waits for the next write, at most {@link DEFERRED_WRITE_MS}. Also the
 * MLS client's callbacks that bind 1:1 groups to the conversation table.
 */
import type { CiphersuiteName } from 'ts-mls';
import type { DeviceIdentity } from '../crypto/keys.js';
import { PrekeyStore } from '../crypto/prekeys.js';
import { equalBytes, hexToBytes, KEY_BYTES } from '../crypto/primitives.js';
import { MlsClient } from '../mls/client.js';
import type { MlsRosterMember } from '../mls/client-types.js';
import type { SessionStore } from '../storage.js';
import { LiveConversation } from './conversation.js';
import { describe, groupConversationId } from './messenger-host.js';
import { emptyState, parseState, type HandledRef, type InboxEntry, type MessengerState } from './state.js';
import { SecureMessengerError, type SecureMessengerOptions, type SessionEvent } from './types.js';

/** Handled message refs kept for the whole device (de-duplication and resume window). */
export const DEVICE_RECENT = 256;
/**
 * How long a change that guards nothing (a delivered message leaving the saved pending list) may
 * wait for the next state write before it is written on its own (ms).
 */
export const DEFERRED_WRITE_MS = 100;

/** Where the state reports what its writes did: session events once saved, failures. */
export interface MessengerCoreEvents {
  session(event: SessionEvent): void;
  error(error: SecureMessengerError): void;
}

/** The saved state of one messenger in memory, its lock and its writes (see the file comment). */
export class MessengerCore {
  conversations = new Map<string, LiveConversation>();
  recent: HandledRef[] = [];
  inbox: InboxEntry[] = [];
  mls: MlsClient | undefined;
  /**
   * This device's X25519 signed and one-time prekeys (X3DH §3.2), saved with the rest of the state:
   * created when `options.prekeys` is on, kept once saved (initial messages in flight still need them).
   */
  prekeys: PrekeyStore | undefined;
  /** True once a state write failed: the messenger refuses work. */
  failed = false;
  /** Session events to emit once the next write succeeded. */
  readonly sessionEvents: SessionEvent[] = [];
  /** One-time prekeys of `options.prekeysFrom` used by sessions not yet saved (deleted after the save). */
  readonly sharedPrekeyUses: string[] = [];
  private readonly identity: DeviceIdentity;
  private readonly store: SessionStore;
  private readonly storeKey: string;
  /** The last state written durably (rollback point). */
  private saved = '';
  /** The state holds a change not written yet that may wait for the next write ({@link DEFERRED_WRITE_MS}). */
  private unsaved = false;
  private deferredTimer: ReturnType<typeof setTimeout> | undefined;
  private lock: Promise<void> = Promise.resolve();

  constructor(
    readonly deviceId: string,
    private readonly options: SecureMessengerOptions,
    private readonly mlsCiphersuites: readonly CiphersuiteName[] | undefined,
    private readonly events: MessengerCoreEvents,
  ) {
    this.identity = options.identity;
    this.store = options.store;
    this.storeKey = options.storeKey ?? `secure-${deviceId}`;
  }

  /**
   * Restore the state from the store (or start empty and save that), and create the MLS client
   * when `mlsEnabled` and the state has none.
   * @throws Error when the saved state is corrupt or belongs to another device; the store's errors.
   */
  async load(mlsEnabled: boolean): Promise<void> {
    const text = await this.store.load(this.storeKey);
    const state = text === undefined ? emptyState(this.deviceId) : parseState(text, this.deviceId);
    await this.restore(state);
    let dirty = text === undefined || (state.prekeys === undefined && this.prekeys !== undefined);
    if (this.mls === undefined && mlsEnabled) {
      this.mls = await MlsClient.create({
        deviceId: this.deviceId,
        signatureKeyPair: this.signatureKeyPair(),
        validateCredential: (id, key) => this.validateCredential(id, key),
        groupRoster: (groupId) => this.groupRoster(groupId),
        ...(this.mlsCiphersuites ? { ciphersuites: this.mlsCiphersuites } : {}),
      });
      dirty = true;
    }
    if (dirty || text === undefined) await this.persist();
    else this.saved = text;
  }

  /** Run `fn` once every change queued before it settled (one at a time). */
  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.lock.then(fn);
    this.lock = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  /** Settles once the changes queued so far settled. */
  get idle(): Promise<void> {
    return this.lock;
  }

  /** @throws SecureMessengerError `stopped` once a write failed. */
  ensureRunning(): void {
    if (this.failed) throw new SecureMessengerError('stopped', 'the messenger stopped after a failed state write');
  }

  /** Note a handled message: in `conv`'s ring, and in the device-wide one unless `deviceWide` is false. */
  remember(ref: HandledRef, conv: LiveConversation | undefined, deviceWide = true): void {
    if (deviceWide) {
      this.recent.push(ref);
      if (this.recent.length > DEVICE_RECENT) this.recent.splice(0, this.recent.length - DEVICE_RECENT);
    }
    conv?.remember(ref);
  }

  /**
   * Write now what waits for the next state write.
   * @throws SecureMessengerError `persist_failed`.
   */
  flush(): Promise<void> {
    if (this.deferredTimer !== undefined) clearTimeout(this.deferredTimer);
    this.deferredTimer = undefined;
    return this.exclusive(async () => {
      if (this.failed || !this.unsaved) return;
      await this.persist();
    });
  }

  /** Note a change that may wait for the next state write, at most {@link DEFERRED_WRITE_MS}. */
  writeLater(): void {
    this.unsaved = true;
    this.deferredTimer ??= setTimeout(() => {
      this.deferredTimer = undefined;
      this.flush().catch(() => undefined); // persist_failed, reported
    }, DEFERRED_WRITE_MS);
  }

  private snapshot(): MessengerState {
    const conversations: MessengerState['conversations'] = {};
    for (const [id, c] of this.conversations) conversations[id] = c.toRecord();
    const mls = this.mls?.exportState();
    return {
      v: 1,
      format: 'parley-secure-messenger',
      device_id: this.deviceId,
      ...(mls !== undefined ? { mls } : {}),
      ...(this.prekeys ? { prekeys: this.prekeys.toJSON() } : {}),
      recent: [...this.recent],
      conversations,
      inbox: [...this.inbox],
    };
  }

  /**
   * Write the whole state (with the changes that waited for it); on failure roll back to the last
   * written one and stop.
   * @throws SecureMessengerError `persist_failed` (also reported).
   */
  async persist(): Promise<void> {
    const text = JSON.stringify(this.snapshot());
    this.unsaved = false;
    try {
      await this.store.save(this.storeKey, text);
    } catch (err) {
      this.sessionEvents.length = 0;
      this.sharedPrekeyUses.length = 0;
      await this.restore(parseState(this.saved, this.deviceId)).catch(() => undefined);
      this.failed = true;
      const e = new SecureMessengerError('persist_failed', `saving the messenger state failed: ${describe(err)}; stopped`, { cause: err });
      this.events.error(e);
      throw e;
    }
    this.saved = text;
    for (const e of this.sessionEvents.splice(0)) this.events.session(e);
    for (const id of this.sharedPrekeyUses.splice(0)) {
      await this.options.prekeysFrom?.consume(id).catch((err: unknown) => {
        this.events.error(new SecureMessengerError('persist_failed', `deleting the used one-time prekey ${id} in the device's prekey holder failed: ${describe(err)}`, { cause: err }));
      });
    }
  }

  private async restore(state: MessengerState): Promise<void> {
    const conversations = new Map<string, LiveConversation>();
    for (const [id, record] of Object.entries(state.conversations)) conversations.set(id, LiveConversation.fromRecord(id, record, this.identity));
    this.conversations = conversations;
    this.prekeys =
      state.prekeys !== undefined ? PrekeyStore.fromJSON(state.prekeys, this.identity) : this.options.prekeys === true ? PrekeyStore.create(this.identity) : undefined;
    this.recent = [...state.recent];
    this.inbox = [...state.inbox];
    this.mls =
      state.mls !== undefined ? await MlsClient.importState(state.mls, {
            validateCredential: (id, key) => this.validateCredential(id, key),
            groupRoster: (groupId) => this.groupRoster(groupId),
            ...(this.mlsCiphersuites ? { ciphersuites: this.mlsCiphersuites } : {}),
          }) : undefined;
    if (this.mls && this.mls.deviceId !== this.deviceId) throw new Error('the saved MLS state belongs to another device');
  }

  private signatureKeyPair() {
    const secret = hexToBytes(this.identity.toJSON().identity_secret_key, KEY_BYTES);
    return { publicKey: this.identity.identityPublicKey, signKey: secret };
  }

  /**
   * The roster of a 1:1 MLS group (`MlsClientCommonOptions.groupRoster`): this device and its
   * conversation's peer, each with its registered identity key; nobody for a group of no known
   * conversation, so its Welcome and commits are refused.
   */
  private groupRoster(groupId: string): MlsRosterMember[] {
    const id = groupConversationId(groupId);
    const conv = id === undefined ? undefined : this.conversations.get(id);
    if (!conv) return [];
    return [
      { deviceId: this.deviceId, signaturePublicKey: this.identity.identityPublicKey },
      { deviceId: conv.peer.device_id, signaturePublicKey: hexToBytes(conv.peer.identity_public_key, KEY_BYTES) },
    ];
  }

  /** MLS credentials must carry the registered identity key of the device they name. */
  private validateCredential(deviceId: string, key: Uint8Array): boolean {
    if (deviceId === this.deviceId) return equalBytes(key, this.identity.identityPublicKey);
    for (const c of this.conversations.values()) {
      if (c.peer.device_id === deviceId) return equalBytes(key, hexToBytes(c.peer.identity_public_key, KEY_BYTES));
    }
    return false;
  }
}

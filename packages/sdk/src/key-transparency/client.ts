/**
 * The client side of key transparency (design §8.39): before a device first trusts a key the
 * service served (a peer's identity and X25519 keys, its signed, PQ and one-time prekeys) and
 * whenever that key changes, it looks the key's label up and verifies the answer (verify.ts)
 * against the facts it pinned on first use (or was configured with) and the last checkpoint it
 * accepted, both kept in its store so a restart cannot be rolled back. A failure throws a
 * {@link KeyTransparencyError} and is reported to the device's owners
 * (`POST /key-directory/reports`). The device also checks its own labels ({@link KeyTransparency.monitorOwn}):
 * a key in its name that it did not publish is reported as `unpublished_key`.
 */
import { deviceKeysLabel, deviceKeysValue, didDocumentValue, didLabel, pqPrekeyLabel, signedPrekeyLabel, signedPrekeyValue, type KeyDirectoryInfo, type KeyDirectoryReportReason } from '@parley/protocol';
import type { ParleyClient } from '../client/rest.js';
import { ParleyApiError } from '../client/errors.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { base64ToBytes, bytesToBase64, bytesToHex } from '../crypto/primitives.js';
import type { SessionStore } from '../storage.js';
import { KeyTransparencyError, trustFromInfo, verifyKeyLookups, type AcceptedCheckpoint, type KeyDirectoryTrust } from './verify.js';

/** The REST calls key transparency makes (a `ParleyClient` has them). */
export type KeyDirectoryClient = Pick<ParleyClient, 'keyDirectoryInfo' | 'keyDirectoryLookups' | 'reportKeyDirectory'>;

/** Whether `client` speaks the key directory routes (a client of an older SDK build does not). */
export const speaksKeyDirectory = (client: unknown): client is KeyDirectoryClient =>
  typeof (client as Partial<KeyDirectoryClient> | undefined)?.keyDirectoryLookups === 'function';

/** Options of {@link KeyTransparency}. */
export interface KeyTransparencyOptions {
  /** Where the pinned facts and the last accepted checkpoint are kept (one key). */
  store: SessionStore;
  /** The key in `store` (default `key-transparency-<device id>`). */
  storeKey?: string;
  /** The device acting (sent as `X-Device-Id` by owner clients; it names the reporter). */
  deviceId?: string;
  /**
   * Facts to pin instead of the service's first answer (from a trusted channel): origin, log
   * keys, VRF key. Witness policy: the stricter of this and the tenant's.
   */
  pinned?: KeyDirectoryInfo;
  /** Report failures to the owners (default true). */
  report?: boolean;
}

/** What is kept in the store. */
interface State {
  info: KeyDirectoryInfo;
  last?: { size: number; root: string };
}

/** Labels and values verified under the current checkpoint line, by `label` → SHA-256 of the value. */
type Verified = Map<string, string>;

export class KeyTransparency {
  private state: State | undefined;
  private trust: KeyDirectoryTrust | undefined;
  private readonly verified: Verified = new Map();
  /** VRF outputs verified under the pinned VRF key, by VRF input (verify.ts `VerifyLookupOptions`). */
  private readonly vrfOutputs = new Map<string, Uint8Array>();
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly client: KeyDirectoryClient,
    private readonly opts: KeyTransparencyOptions,
  ) {}

  private get storeKey(): string {
    return this.opts.storeKey ?? `key-transparency-${this.opts.deviceId ?? 'client'}`;
  }

  private get requestOpts() {
    return this.opts.deviceId ? { deviceId: this.opts.deviceId } : undefined;
  }

  /** The pinned trust, loading the store or pinning the service's answer on first use. */
  private async pinned(): Promise<KeyDirectoryTrust> {
    if (this.trust) return this.trust;
    const saved = await this.opts.store.load(this.storeKey);
    if (saved) this.state = JSON.parse(saved) as State;
    const served = await this.client.keyDirectoryInfo(this.requestOpts);
    const base = this.state?.info ?? this.opts.pinned ?? served;
    if (served.origin !== base.origin || served.vrf_public_key !== base.vrf_public_key || !served.log_keys.some((k) => base.log_keys.some((p) => p.vkey === k.vkey))) {
      throw new KeyTransparencyError('pinned_keys_changed', `the service answers other key directory keys than the ones pinned (origin ${served.origin}, VRF key ${served.vrf_public_key.slice(0, 16)}…)`);
    }
    // Log keys: the pinned ones and those rotated in beside one of them. Witnesses: never fewer.
    const logKeys = [...base.log_keys, ...served.log_keys.filter((k) => !base.log_keys.some((p) => p.vkey === k.vkey))];
    const witnesses = [...new Set([...base.witnesses, ...served.witnesses])];
    const info: KeyDirectoryInfo = { ...base, log_keys: logKeys, witnesses, min_cosignatures: Math.max(base.min_cosignatures, served.min_cosignatures) };
    this.state = { ...this.state, info };
    this.trust = trustFromInfo(info);
    await this.save();
    return this.trust;
  }

  private async save(): Promise<void> {
    await this.opts.store.save(this.storeKey, JSON.stringify(this.state));
  }

  private last(): AcceptedCheckpoint | undefined {
    const l = this.state?.last;
    return l ? { size: l.size, root: base64ToBytes(l.root) } : undefined;
  }

  /** One verification at a time: each moves the accepted checkpoint forward. */
  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn, fn);
    this.queue = run.catch(() => undefined);
    return run;
  }

  /**
   * Look `keys` up in one request and verify the answer against one checkpoint, then keep the
   * checkpoint it moved to.
   * @throws KeyTransparencyError; `not_in_directory` (with the label) for a label the directory does not hold.
   */
  private check(keys: readonly (readonly [string, Uint8Array])[]): Promise<void> {
    return this.serial(async () => {
      const trust = await this.pinned();
      const last = this.last();
      const labels = keys.map(([label]) => label);
      let answer;
      try {
        answer = await this.client.keyDirectoryLookups({ labels, ...(last ? { since: last.size } : {}) }, this.requestOpts);
      } catch (err) {
        if (err instanceof ParleyApiError && err.status === 404) {
          // The label the detail names (the longest that fits: a device's label prefixes its prekeys').
          const label = labels.filter((l) => err.message.includes(l)).sort((a, b) => b.length - a.length)[0] ?? labels[0]!;
          throw new KeyTransparencyError('not_in_directory', `the service served a key for ${label} that is not in the key directory`, { cause: err, label });
        }
        throw err;
      }
      const { checkpoint } = verifyKeyLookups(trust, last, keys, answer, { vrfOutputs: this.vrfOutputs });
      this.state = { ...this.state!, last: { size: checkpoint.size, root: bytesToBase64(checkpoint.root) } };
      await this.save();
    });
  }

  /**
   * Verify that each value is the current value of its label in the key directory, in one lookup
   * (keys verified before with the same value are skipped; a changed value is verified again).
   * @throws KeyTransparencyError (also reported to the owners unless `report` is off).
   */
  async verifyAll(keys: readonly (readonly [label: string, value: Uint8Array])[]): Promise<void> {
    const todo = keys.map(([label, value]) => ({ label, value, digest: bytesToHex(sha256(value)) })).filter((k) => this.verified.get(k.label) !== k.digest);
    if (todo.length === 0) return;
    try {
      await this.check(todo.map((k) => [k.label, k.value] as const));
      for (const k of todo) this.verified.set(k.label, k.digest);
    } catch (err) {
      if (err instanceof KeyTransparencyError) await this.report(err.label ?? todo[0]!.label, 'verification_failed', err.message);
      throw err;
    }
  }

  /** {@link verifyAll} of one label. */
  verify(label: string, value: Uint8Array): Promise<void> {
    return this.verifyAll([[label, value]]);
  }

  /**
   * Verify the verification methods of a `did:hub` document (`did/<did>`): before trusting a key
   * of it (an Agent Card signature, a credential).
   */
  verifyDidDocument(doc: { id: string; verificationMethod?: readonly { id: string; publicKeyMultibase?: string }[] }): Promise<void> {
    const methods = (doc.verificationMethod ?? []).map((m) => ({ id: m.id, publicKeyMultibase: m.publicKeyMultibase ?? '' }));
    return this.verify(didLabel(doc.id), didDocumentValue(methods));
  }

  /** Verify a peer device's identity and X25519 keys (`device/<id>`). */
  verifyDevice(peer: { device_id: string; identity_public_key: string; ephemeral_public_key: string }): Promise<void> {
    return this.verify(deviceKeysLabel(peer.device_id), deviceKeysValue(peer));
  }

  /**
   * Check this device's own entries (at start and periodically): its identity and X25519 keys,
   * and the signed prekeys it published (`signedPrekey`, `pqPrekey`: the ones it holds as
   * current). An entry that does not hold them is a key the service put in its name: reported as
   * `unpublished_key` and answered in the list (empty when all is well).
   */
  async monitorOwn(own: {
    device_id: string;
    identity_public_key: string;
    ephemeral_public_key: string;
    signedPrekey?: { key_id: string; public_key: string; signature: string };
    pqPrekey?: { key_id: string; public_key: string; signature: string };
  }): Promise<KeyTransparencyError[]> {
    const checks: [string, Uint8Array][] = [[deviceKeysLabel(own.device_id), deviceKeysValue(own)]];
    if (own.signedPrekey) checks.push([signedPrekeyLabel(own.device_id), signedPrekeyValue(own.signedPrekey)]);
    if (own.pqPrekey) checks.push([pqPrekeyLabel(own.device_id), signedPrekeyValue(own.pqPrekey)]);
    const found: KeyTransparencyError[] = [];
    for (const [label, value] of checks) {
      this.verified.delete(label);
      try {
        await this.check([[label, value]]);
      } catch (err) {
        if (!(err instanceof KeyTransparencyError)) throw err;
        // Another value than its own (or none at all) under its label: a key it did not publish.
        const foreign = err.code === 'key_mismatch' || err.code === 'not_in_directory';
        found.push(err);
        await this.report(label, foreign ? 'unpublished_key' : 'verification_failed', foreign ? `the key directory holds a key for ${label} that this device did not publish` : err.message);
      }
    }
    return found;
  }

  /** Tell the owners (best effort: a report that fails is not the caller's error). */
  private async report(label: string, reason: KeyDirectoryReportReason, detail: string): Promise<void> {
    if (this.opts.report === false) return;
    try {
      await this.client.reportKeyDirectory({ label, reason, detail: detail.slice(0, 500) }, this.requestOpts);
    } catch {
      // The service may refuse or drop it; the local error still stands.
    }
  }
}


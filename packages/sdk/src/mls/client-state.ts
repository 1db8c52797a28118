/**
 * The saved form of an `MlsClient` (`exportState` / `importState`): format
 * `parley-mls-client` v1 — device id, signature key pair, the unused KeyPackages with their private
 * parts, and each group's state (ts-mls `encodeGroupState`, base64) with the commit waiting for
 * `mergePendingCommit`. It holds private keys: the store must keep it confidential. Also the
 * ts-mls `ClientConfig` every group state carries.
 */
import {
  decodeGroupState,
  defaultKeyPackageEqualityConfig,
  defaultKeyRetentionConfig,
  defaultLifetimeConfig,
  defaultPaddingConfig,
  encodeGroupState,
  type AuthenticationService,
  type CiphersuiteImpl,
  type CiphersuiteName,
  type ClientConfig,
  type ClientState,
} from 'ts-mls';
// Part of ts-mls's published `./*.js` export map (ts-mls is pinned): the KeyPackageRef a Welcome addresses.
import { makeKeyPackageRef } from 'ts-mls/keyPackage.js';
import { base64ToBytes, bytesToBase64 } from './base64.js';
import { MLS_CIPHERSUITE } from './ciphersuites.js';
import { MlsClientError } from './errors.js';
import type { Ed25519KeyPair, MlsClientCommonOptions } from './client-types.js';
import { decodeKeyPackageMessage, toHex, type StoredKeyPackage } from './key-packages.js';
import { credentialDeviceId } from './roster.js';

const STATE_FORMAT = 'parley-mls-client';

/** A commit created with `deferMerge`, waiting for `mergePendingCommit`. */
export interface PendingCommit {
  state: ClientState;
  consumed: Uint8Array[];
  commit: Uint8Array;
  welcome: Uint8Array | undefined;
  commitEpoch: bigint;
}

/** The JSON of a saved client (binary fields base64, epochs as decimal strings). */
export interface SerializedClient {
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

/** The saved form of a client's parts, as a string. */
export function serializeClient(
  deviceId: string,
  signature: Ed25519KeyPair,
  keyPackages: Iterable<StoredKeyPackage>,
  groups: Iterable<[string, ClientState]>,
  pending: ReadonlyMap<string, PendingCommit>,
): string {
  const data: SerializedClient = {
    format: STATE_FORMAT,
    v: 1,
    deviceId,
    cipherSuite: MLS_CIPHERSUITE,
    signaturePublicKey: bytesToBase64(signature.publicKey),
    signaturePrivateKey: bytesToBase64(signature.signKey),
    keyPackages: [...keyPackages].map((k) => ({
      keyPackage: bytesToBase64(k.encoded),
      initPrivateKey: bytesToBase64(k.initPrivateKey),
      hpkePrivateKey: bytesToBase64(k.hpkePrivateKey),
    })),
    groups: [...groups].map(([groupId, state]) => {
      const p = pending.get(groupId);
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

/**
 * The JSON of a saved client, its format, version, suite and device id checked.
 * @throws MlsClientError `invalid_state`.
 */
export function parseSerializedClient(serialized: string): SerializedClient {
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
  return data;
}

/**
 * A saved group state (base64 of ts-mls `encodeGroupState`) with the client's config, in a suite
 * of `suites`.
 * @throws MlsClientError `invalid_state`.
 */
export function decodeClientState(b64: string, clientConfig: ClientConfig, suites: ReadonlyMap<CiphersuiteName, CiphersuiteImpl>): ClientState {
  const bytes = base64ToBytes(b64);
  const decoded = decodeGroupState(bytes, 0);
  if (decoded === undefined || decoded[1] !== bytes.length) throw new MlsClientError('invalid_state', 'corrupt group state');
  const state: ClientState = { ...decoded[0], clientConfig };
  if (!suites.has(state.groupContext.cipherSuite)) throw new MlsClientError('invalid_state', `group state uses ciphersuite ${state.groupContext.cipherSuite}, not run here`);
  return state;
}

/**
 * The ts-mls config of every group state: default retention, lifetime, equality and padding, and
 * an authentication service (RFC 9420 §5.3.1) accepting basic credentials that name a device, then
 * asking `validateCredential` (`MlsClientCommonOptions.validateCredential`) when given.
 */
export function mlsClientConfig(validateCredential: MlsClientCommonOptions['validateCredential']): ClientConfig {
  const authService: AuthenticationService = {
    async validateCredential(credential, signaturePublicKey) {
      const id = credentialDeviceId(credential);
      if (id === undefined) return false;
      return validateCredential === undefined ? true : (await validateCredential(id, signaturePublicKey)) === true;
    },
  };
  return {
    keyRetentionConfig: defaultKeyRetentionConfig,
    lifetimeConfig: defaultLifetimeConfig,
    keyPackageEqualityConfig: defaultKeyPackageEqualityConfig,
    paddingConfig: defaultPaddingConfig,
    authService,
  };
}

/**
 * A saved KeyPackage with its private parts, and its hex KeyPackageRef (RFC 9420 §5.2) under the
 * hash of its suite (`impl` answers a suite the client runs, or throws).
 */
export async function restoreKeyPackage(k: SerializedClient['keyPackages'][number], impl: (suite: CiphersuiteName) => CiphersuiteImpl): Promise<[string, StoredKeyPackage]> {
  const encoded = base64ToBytes(k.keyPackage);
  const publicPackage = decodeKeyPackageMessage(encoded);
  const ref = toHex(await makeKeyPackageRef(publicPackage, impl(publicPackage.cipherSuite).hash));
  return [
    ref,
    {
      publicPackage,
      encoded,
      initPrivateKey: base64ToBytes(k.initPrivateKey),
      hpkePrivateKey: base64ToBytes(k.hpkePrivateKey),
    },
  ];
}

/** A saved pending commit, its group state `state` already decoded (its consumed secrets are not saved). */
export function restorePendingCommit(p: NonNullable<SerializedClient['groups'][number]['pending']>, state: ClientState): PendingCommit {
  return {
    state,
    consumed: [],
    commit: base64ToBytes(p.commit),
    welcome: p.welcome === undefined ? undefined : base64ToBytes(p.welcome),
    commitEpoch: BigInt(p.commitEpoch),
  };
}

/**
 * The group state once a pending commit is merged: the commit's, except that the receiver keys of
 * the epoch it leaves are taken as they are now — application messages of that epoch were still
 * processed while the commit was pending — not as they were at commit time.
 */
export function mergedState(current: ClientState, pending: PendingCommit): ClientState {
  const historical = new Map(pending.state.historicalReceiverData);
  const old = historical.get(current.groupContext.epoch);
  if (old !== undefined) historical.set(current.groupContext.epoch, { ...old, secretTree: current.secretTree });
  return { ...pending.state, historicalReceiverData: historical };
}

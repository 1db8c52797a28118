/**
 * The agent side of enrollment and device-token renewal (contract §3.1, §4.3, §4.4, §5, §8;
 * design §5, §7), with proof of possession at every step:
 *
 * 1. `enroll`: `POST /enroll` with the invite token, the hex identity (Ed25519) and ephemeral
 *    (X25519) public keys and a signature by the identity key over the raw 32-byte identity public key.
 * 2. `waitForApproval`: poll `GET /devices/{id}/status` no faster than once per 5 s (contract §8),
 *    backing off on 429 (`Retry-After`) and on network errors, until APPROVED; REVOKED (rejected
 *    or revoked by the owner) fails with {@link EnrollmentRejectedError}.
 * 3. `activate`: `POST /devices/{id}/activate` with a signature over UTF-8 `activate:<device_id>`
 *    -> device JWT, conversation_id, owner public keys.
 *
 * Activation also sends a fresh key binding (client/key-binding.ts) when the caller gives the
 * device's keys.
 *
 * Renewal: `POST /devices/{id}/token/challenge` then `POST /devices/{id}/token` with a signature
 * over the challenge under the `parley/v2/token-renewal` domain (@parley/protocol
 * `tokenRenewalMessage`), after checking that the challenge has the service's form for this device
 * ({@link InvalidChallengeError}); {@link startTokenAutoRenew} schedules it before the JWT expires.
 *
 * Signing is a parameter ({@link Signer}) so that keys may live anywhere (software keys, a KMS,
 * WebCrypto, a hardware token); this module does not depend on the SDK's crypto code.
 */
import { hexToBytes, jwtExpiry, keyToHex, utf8 } from './encoding.js';
import { ParleyApiError, ParleyNetworkError } from './errors.js';
import type { ParleyClient } from './rest.js';
import { isRenewalChallengeFor, RENEWAL_CHALLENGE_MAX_LENGTH, tokenRenewalMessage, type ActivateResponse, type DeviceStatus, type DeviceToken, type EnrollResponse } from '@parley/protocol';
import { bindKeys, type BindingKeys } from './key-binding.js';
import { signHex, type Signer } from './signer.js';

export { signHex, type Signer };


/** The agent's keys for enrollment (contract §2.3). Public keys as 32 raw bytes or 64 hex characters. */
export interface AgentIdentity {
  /** Ed25519 identity public key. */
  identityPublicKey: string | Uint8Array;
  /** X25519 public key used for key agreement. */
  ephemeralPublicKey: string | Uint8Array;
  /** Signs with the identity private key. */
  sign: Signer;
  /** Runtime name (contract §4.3 `platform`, at most 100 characters). */
  platform?: string;
  /** Device name shown to the owner (1–100 characters). */
  name?: string;
}

/** Thrown while waiting for approval when the owner rejected or revoked the device (status REVOKED). */
export class EnrollmentRejectedError extends Error {
  override readonly name = 'EnrollmentRejectedError';
  constructor(readonly deviceId: string) {
    super(`device ${deviceId} was rejected or revoked by the owner`);
  }
}

/** Thrown when approval did not arrive within `timeoutMs`, or the wait was aborted. */
export class EnrollmentTimeoutError extends Error {
  override readonly name = 'EnrollmentTimeoutError';
  constructor(
    readonly deviceId: string,
    readonly aborted: boolean,
  ) {
    super(aborted ? `waiting for approval of ${deviceId} was aborted` : `device ${deviceId} was not approved in time`);
  }
}

/** Options of {@link waitForApproval}. */
export interface WaitForApprovalOptions {
  /** Interval between status polls in ms (default 5000; values below 5000 are raised to contract §8's 5 s). */
  pollIntervalMs?: number;
  /** Largest delay between polls after back-off (ms, default 60 000). */
  maxBackoffMs?: number;
  /** Give up after this many ms (default: wait forever). */
  timeoutMs?: number;
  /** Abort the wait. */
  signal?: AbortSignal;
  /** Called with every status read (PENDING, APPROVED, …). */
  onStatus?: (status: DeviceStatus) => void;
  /**
   * Allow polls faster than contract §8's one per 5 s (tests against a server with a raised limit).
   * Default false.
   */
  unsafeFastPolling?: boolean;
}

/** Options of {@link enrollAgent}: those of {@link waitForApproval}, plus whether to install the JWT. */
export interface EnrollAgentOptions extends WaitForApprovalOptions {
  /** Called once enrolled (e.g. to show the fingerprint to compare with the owner). */
  onEnrolled?: (enrolled: EnrollResponse) => void;
  /** Install the new device JWT on the client (`setDeviceToken`). Default true. */
  setToken?: boolean;
}

/** The result of the whole agent flow: activation answer plus the enrollment fingerprint. */
export interface ActivatedAgent extends ActivateResponse {
  /** The identity key fingerprint returned at enrollment (design §7). */
  fingerprint: string;
}

const STATUS_MIN_INTERVAL_MS = 5000;


function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal!.reason);
    };
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Step 1: `POST /enroll` with proof of possession (signature over the raw identity public key).
 * @throws ParleyApiError 401 (invite unknown, used, revoked or expired), 400 (bad keys/proof), 429.
 */
export async function enroll(client: ParleyClient, inviteToken: string, identity: AgentIdentity): Promise<EnrollResponse> {
  const ipk = keyToHex(identity.identityPublicKey);
  const proof = await signHex(identity.sign, hexToBytes(ipk));
  return client.enroll({
    invite_token: inviteToken,
    identity_public_key: ipk,
    ephemeral_public_key: keyToHex(identity.ephemeralPublicKey),
    proof_of_possession: proof,
    ...(identity.platform !== undefined ? { platform: identity.platform } : {}),
    ...(identity.name !== undefined ? { name: identity.name } : {}),
  });
}

/**
 * Step 2: poll `GET /devices/{id}/status` until the owner approves. The first poll is immediate;
 * then one per `pollIntervalMs` (>= 5 s). A 429 waits for `Retry-After` (at least the interval)
 * and doubles the interval up to `maxBackoffMs`; network errors and 5xx back off the same way.
 * Resolves with `APPROVED`, or `ACTIVE` when the device was already activated.
 * @throws EnrollmentRejectedError on REVOKED; EnrollmentTimeoutError on timeout or abort;
 *   ParleyApiError for other 4xx answers (e.g. 404 unknown device).
 */
export async function waitForApproval(client: ParleyClient, deviceId: string, options: WaitForApprovalOptions = {}): Promise<'APPROVED' | 'ACTIVE'> {
  const floor = options.unsafeFastPolling ? 0 : STATUS_MIN_INTERVAL_MS;
  const base = Math.max(floor, options.pollIntervalMs ?? STATUS_MIN_INTERVAL_MS);
  const maxBackoff = Math.max(base, options.maxBackoffMs ?? 60_000);
  const deadline = options.timeoutMs !== undefined ? Date.now() + options.timeoutMs : Infinity;
  let interval = base;
  for (;;) {
    if (options.signal?.aborted) throw new EnrollmentTimeoutError(deviceId, true);
    let delay: number;
    try {
      const { status } = await client.deviceStatus(deviceId, options.signal ? { signal: options.signal } : {});
      options.onStatus?.(status);
      if (status === 'APPROVED' || status === 'ACTIVE') return status;
      if (status === 'REVOKED') throw new EnrollmentRejectedError(deviceId);
      interval = base;
      delay = base;
    } catch (err) {
      if (err instanceof EnrollmentRejectedError) throw err;
      if (err instanceof ParleyApiError && err.status === 429) {
        delay = Math.max(interval, err.retryAfterMs ?? 0);
        interval = Math.min(maxBackoff, interval * 2);
      } else if ((err instanceof ParleyApiError && err.status >= 500) || (err instanceof ParleyNetworkError && !err.aborted)) {
        delay = interval;
        interval = Math.min(maxBackoff, interval * 2);
      } else if (err instanceof ParleyNetworkError && err.aborted) {
        throw new EnrollmentTimeoutError(deviceId, true);
      } else {
        throw err;
      }
    }
    if (Date.now() + delay > deadline) throw new EnrollmentTimeoutError(deviceId, false);
    try {
      await sleep(delay, options.signal);
    } catch {
      throw new EnrollmentTimeoutError(deviceId, true);
    }
  }
}

/**
 * Step 3: `POST /devices/{id}/activate` with a signature over UTF-8 `activate:<device_id>`, and,
 * when `identity` carries the device's public keys, a fresh key binding (purpose
 * `device_activate`, client/key-binding.ts `bindKeys`). A bare {@link Signer} sends the
 * signature alone, which a server with `KEY_BINDING_REQUIRED` refuses.
 * @throws ParleyApiError 400 (bad key binding), 401 (signature does not verify), 403 (revoked),
 *   409 (not APPROVED); KeyBindingError.
 */
export async function activate(client: ParleyClient, deviceId: string, identity: Signer | BindingKeys): Promise<ActivateResponse> {
  const sign = typeof identity === 'function' ? identity : identity.sign;
  const signature = await signHex(sign, utf8(`activate:${deviceId}`));
  if (typeof identity === 'function') return client.activateDevice(deviceId, { signature });
  const key_binding = await bindKeys(client, 'device_activate', identity, deviceId);
  return client.activateDevice(deviceId, { signature, key_binding });
}

/**
 * The whole agent flow: enroll -> wait for the owner's approval -> activate. By default the new
 * device JWT is installed on `client` (`setDeviceToken`).
 * @throws as {@link enroll}, {@link waitForApproval} and {@link activate}.
 */
export async function enrollAgent(client: ParleyClient, inviteToken: string, identity: AgentIdentity, options: EnrollAgentOptions = {}): Promise<ActivatedAgent> {
  const enrolled = await enroll(client, inviteToken, identity);
  options.onEnrolled?.(enrolled);
  await waitForApproval(client, enrolled.device_id, options);
  const activated = await activate(client, enrolled.device_id, identity);
  if (options.setToken ?? true) client.setDeviceToken(activated.device_jwt);
  return { ...activated, fingerprint: enrolled.fingerprint };
}

/**
 * Thrown when the service's renewal challenge is not of the form it issues for this device
 * (@parley/protocol `isRenewalChallengeFor`): the identity key signs nothing else, so a server
 * cannot use renewal to have it sign a message of its choosing (an encoded key, say).
 */
export class InvalidChallengeError extends Error {
  override readonly name = 'InvalidChallengeError';
  constructor(readonly deviceId: string) {
    super(`refusing to sign the renewal challenge for ${deviceId}: it is not of the form parley-renew:<device id>:<expiry>:<nonce>:<mac> (printable ASCII, at most ${RENEWAL_CHALLENGE_MAX_LENGTH} characters) naming this device`);
  }
}

/**
 * Renew the device JWT: fetch a challenge, check its form
 * ({@link InvalidChallengeError}), sign it under the token-renewal domain (@parley/protocol
 * `tokenRenewalMessage`), exchange it for a new JWT. By default the new JWT is installed on `client`.
 * @throws InvalidChallengeError before signing anything; ParleyApiError 403 (revoked), 409 (not
 *   ACTIVE), 401 (signature does not verify).
 */
export async function renewDeviceToken(client: ParleyClient, deviceId: string, sign: Signer, options: { setToken?: boolean } = {}): Promise<DeviceToken> {
  const { challenge } = await client.tokenChallenge(deviceId);
  if (!isRenewalChallengeFor(challenge, deviceId)) throw new InvalidChallengeError(deviceId);
  const signature = await signHex(sign, tokenRenewalMessage(challenge));
  const token = await client.renewToken(deviceId, { challenge, signature });
  if (options.setToken ?? true) client.setDeviceToken(token.device_jwt);
  return token;
}

/** Options of {@link startTokenAutoRenew}. */
export interface AutoRenewOptions {
  /** The device whose token is renewed. */
  deviceId: string;
  /** Signs with the device identity key. */
  sign: Signer;
  /**
   * Expiry of the current token (ISO string or Date). Default: the `exp` claim of the client's
   * current device JWT; renewal starts at once when neither is known.
   */
  expiresAt?: string | Date;
  /** Renew this many ms before expiry (default: 10 % of the remaining lifetime, between 1 min and 1 h). */
  renewBeforeMs?: number;
  /** First retry delay after a failed renewal, doubled up to 5 min (ms, default 5000). */
  retryDelayMs?: number;
  /** Called with each new token (already installed on the client). */
  onRenewed?: (token: DeviceToken) => void;
  /**
   * Called with each failure. After a 403 (device revoked) or 409 (device no longer ACTIVE)
   * renewal stops (`fatal` true); other failures are retried.
   */
  onError?: (err: unknown, fatal: boolean) => void;
}

/** Handle of a running auto-renewal. */
export interface AutoRenewHandle {
  /** Stop renewing (idempotent). */
  stop(): void;
  /** Renew now (also reschedules); rejects with the renewal's error. */
  renewNow(): Promise<DeviceToken>;
  /** When the next renewal is due, or undefined when stopped. */
  readonly nextRenewalAt: Date | undefined;
}

const MAX_TIMER_MS = 2_147_483_647;

/**
 * Keep the client's device JWT fresh: renew it before it expires (see {@link AutoRenewOptions}).
 * Timers are `unref`'d on Node so that they alone never keep a process alive.
 */
export function startTokenAutoRenew(client: ParleyClient, options: AutoRenewOptions): AutoRenewHandle {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;
  let nextAt: Date | undefined;
  let retryDelay = options.retryDelayMs ?? 5000;

  const schedule = (at: number) => {
    if (stopped) return;
    if (timer !== undefined) clearTimeout(timer);
    nextAt = new Date(at);
    timer = setTimeout(() => void run().catch(() => undefined), Math.min(MAX_TIMER_MS, Math.max(0, at - Date.now())));
    (timer as { unref?: () => void }).unref?.();
  };

  const dueFor = (expiresAt: Date): number => {
    const remaining = expiresAt.getTime() - Date.now();
    const before = options.renewBeforeMs ?? Math.min(3_600_000, Math.max(60_000, remaining * 0.1));
    return expiresAt.getTime() - before;
  };

  const run = async (): Promise<DeviceToken> => {
    try {
      const token = await renewDeviceToken(client, options.deviceId, options.sign);
      retryDelay = options.retryDelayMs ?? 5000;
      options.onRenewed?.(token);
      schedule(dueFor(new Date(token.expires_at)));
      return token;
    } catch (err) {
      const fatal = err instanceof ParleyApiError && (err.status === 403 || err.status === 409);
      options.onError?.(err, fatal);
      if (fatal) handle.stop();
      else {
        schedule(Date.now() + retryDelay);
        retryDelay = Math.min(300_000, retryDelay * 2);
      }
      throw err;
    }
  };

  const handle: AutoRenewHandle = {
    stop() {
      stopped = true;
      nextAt = undefined;
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
    },
    renewNow: () => run(),
    get nextRenewalAt() {
      return nextAt;
    },
  };

  void (async () => {
    let exp: Date | undefined = options.expiresAt !== undefined ? new Date(options.expiresAt) : undefined;
    if (!exp) {
      const current = await client.currentDeviceToken();
      exp = current ? jwtExpiry(current) : undefined;
    }
    schedule(exp ? dueFor(exp) : Date.now());
  })();

  return handle;
}

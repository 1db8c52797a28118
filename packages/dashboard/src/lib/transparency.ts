/**
 * The audit log's transparency checks in the browser (design §8.33), with the SDK's verifier:
 *
 * - the platform's audit-log key is pinned in this browser the first time it is seen (trust on
 *   first use, per owner device, in `localStorage`); later checks verify with the pinned key, and a
 *   key the service no longer signs with is reported, not silently replaced;
 * - each check verifies the latest checkpoint's signature and, when this browser verified an
 *   earlier checkpoint, the consistency proof from that one: the service cannot rewrite or drop
 *   what this browser has seen without the check failing. The newest verified checkpoint is kept;
 * - an event's proof bundle (the event, its audit path, the checkpoint) is verified before it is
 *   offered for download.
 */
import { AuditLogError, verifyCheckpoint, verifyCheckpointConsistency, verifyEventProof, type AuditEventProof, type ParleyClient } from '@parley/sdk';

/** What the browser keeps of the log it verified: the pinned key and the newest verified checkpoint. */
export interface LogPin {
  vkey: string;
  /** `<host>/audit/<tenant_id>`: the log the pin is for ('' until a checkpoint was verified). */
  origin: string;
  /** The newest verified checkpoint and its size ('' and 0 until one was verified with `vkey`). */
  treeSize: number;
  checkpoint: string;
}

/** Where the pin is kept. */
export interface PinStore {
  get(): LogPin | null;
  set(pin: LogPin): void;
  clear(): void;
}

/** The pin of owner device `deviceId` in `localStorage`. */
export function localPinStore(deviceId: string): PinStore {
  const key = `parley.audit-log.${deviceId}`;
  return {
    get() {
      try {
        const pin = JSON.parse(localStorage.getItem(key) ?? 'null') as LogPin | null;
        return pin && typeof pin.vkey === 'string' && typeof pin.origin === 'string' && typeof pin.checkpoint === 'string' && Number.isSafeInteger(pin.treeSize) ? pin : null;
      } catch {
        return null;
      }
    },
    set: (pin) => localStorage.setItem(key, JSON.stringify(pin)),
    clear: () => localStorage.removeItem(key),
  };
}

export type LogClient = Pick<ParleyClient, 'getAuditLogKey' | 'getAuditCheckpoint' | 'getAuditConsistency' | 'getAuditEventProof'>;

/** The outcome of {@link checkLog}. */
export type LogVerdict =
  | {
      verified: true;
      treeSize: number;
      timestamp: string | null;
      vkey: string;
      /** The size of the checkpoint this browser had verified before, which the new one extends (null on first use). */
      extends: number | null;
    }
  | {
      verified: false;
      reason: string;
      vkey: string;
      /** The service's current key when it is not the pinned one (the owner may choose to trust it). */
      newKey: string | null;
    };

const fail = (why: string): never => {
  throw new AuditLogError('consistency_failed', why);
};

/**
 * Verify the tenant's latest checkpoint with the pinned key (pinning the service's key on first
 * use) and its consistency with the checkpoint verified before; keep it as the new pin.
 * @throws what the client throws (network, 401/403): a check that could not run is no verdict.
 */
export async function checkLog(client: LogClient, store: PinStore): Promise<LogVerdict> {
  const key = await client.getAuditLogKey();
  const pin = store.get();
  const vkey = pin?.vkey ?? key.vkey;
  const published = [key.vkey, ...key.previous.map((k) => k.vkey)];
  const c = await client.getAuditCheckpoint();
  try {
    const now = verifyCheckpoint(c.checkpoint, vkey);
    if (pin?.origin && now.origin !== pin.origin) fail(`the service answered the log ${now.origin}, not ${pin.origin} verified before`);
    // A pin without a checkpoint: a key just trusted, nothing verified with it yet.
    const prior = pin?.checkpoint ? pin : null;
    if (prior) {
      if (now.treeSize < prior.treeSize) fail(`the log has ${now.treeSize} events, fewer than the ${prior.treeSize} this browser verified`);
      // Equal sizes need equal roots and the empty tree is a prefix of every tree: no proof to ask for.
      const local = now.treeSize === prior.treeSize || prior.treeSize === 0;
      const proof = local ? { first: prior.treeSize, second: now.treeSize, proof: [] } : await client.getAuditConsistency({ first: prior.treeSize, second: now.treeSize });
      verifyCheckpointConsistency(prior.checkpoint, c.checkpoint, proof, vkey);
    }
    store.set({ vkey, origin: now.origin, treeSize: now.treeSize, checkpoint: c.checkpoint });
    return { verified: true, treeSize: now.treeSize, timestamp: now.timestamp, vkey, extends: prior ? prior.treeSize : null };
  } catch (err) {
    if (!(err instanceof AuditLogError)) throw err;
    return { verified: false, reason: err.message, vkey, newKey: published.includes(vkey) ? null : key.vkey };
  }
}

/**
 * Trust the service's current key from now on: the pin keeps its log (origin) and starts over with
 * the key; the next check pins that key's checkpoint.
 */
export function trustNewKey(store: PinStore, vkey: string): void {
  store.set({ vkey, origin: store.get()?.origin ?? '', treeSize: 0, checkpoint: '' });
}

/** The event's proof bundle, verified with the pinned key (or the service's when nothing is pinned yet). */
export async function proveEvent(client: LogClient, store: PinStore, eventId: string): Promise<{ bundle: AuditEventProof; treeSize: number }> {
  const vkey = store.get()?.vkey ?? (await client.getAuditLogKey()).vkey;
  const bundle = await client.getAuditEventProof(eventId);
  return { bundle, treeSize: verifyEventProof(bundle, vkey).checkpoint.treeSize };
}

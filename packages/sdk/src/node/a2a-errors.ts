/**
 * JSON-RPC errors (JSON-RPC 2.0 §5.1) the plugin answers A2A calls with when Parley, not the
 * remote agent, stops a call. Codes are in JSON-RPC's implementation-defined server-error range
 * (-32000 to -32099), away from the codes A2A 1.0 assigns (-32001 to -32009); the message names
 * the cause and `data` carries it machine-readably: `{parley_cause, retry_after_ms?, channel_id?}`.
 */

/** Causes and their codes. */
export const A2A_PARLEY_ERRORS = {
  /** The caller's hub identity is below the trust tier (or agreement floor) needed to open the channel. */
  tier_below_floor: -32050,
  /** A tenant policy, federation agreement or the service refused the call or the channel. */
  policy_blocked: -32051,
  /** A tenant policy holds the call for an owner's approval. */
  policy_held: -32052,
  /** The channel waits for the responder's owner's approval. */
  channel_pending: -32053,
  /** The channel was rejected or revoked. */
  channel_closed: -32054,
  /** The peer agent did not answer in time (offline, or its key exchange is incomplete). */
  peer_offline: -32055,
  /** The remote card's signature did not verify against its `did:hub` document. */
  card_signature_invalid: -32056,
  /** The remote agent's own A2A server (its upstream) is down or not configured. */
  upstream_down: -32057,
  /** The Parley service could not be reached or failed. */
  service_unavailable: -32058,
  /** No hub identity with this address. */
  unknown_peer: -32059,
} as const;

/** A cause of {@link A2A_PARLEY_ERRORS}. */
export type A2aParleyCause = keyof typeof A2A_PARLEY_ERRORS;

/** A JSON-RPC error object. */
export interface JsonRpcErrorObject {
  code: number;
  message: string;
  data?: Record<string, unknown>;
}

/** An error of an A2A call stopped by Parley; `toJsonRpc()` gives the error object. */
export class A2aParleyError extends Error {
  constructor(
    readonly parleyCause: A2aParleyCause,
    message: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
  }

  /** The JSON-RPC error object: `{code, message, data: {parley_cause, ...extra}}`. */
  toJsonRpc(): JsonRpcErrorObject {
    return { code: A2A_PARLEY_ERRORS[this.parleyCause], message: this.message, data: { parley_cause: this.parleyCause, ...this.extra } };
  }
}

/** A JSON-RPC error response (id null when the request had none). */
export function jsonRpcError(id: unknown, error: JsonRpcErrorObject): Record<string, unknown> {
  return { jsonrpc: '2.0', id: typeof id === 'string' || typeof id === 'number' ? id : null, error };
}

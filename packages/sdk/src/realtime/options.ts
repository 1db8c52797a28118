/**
 * Options of the realtime client (contract §6.1, §8; design §6): what a caller passes to
 * `new RealtimeClient(…)`, the reconnection policy, the default cursor order, and the options
 * with their defaults filled in as the client's parts use them.
 */
import type { TokenSource } from '../client/rest.js';
import type { CatchUpSource, OutboundScanner, WebSocketLikeConstructor } from './types.js';

/** Reconnection policy. Delay of attempt n (1-based): `min(maxDelayMs, initialDelayMs * factor^(n-1)) * (1 - jitter * random())`. */
export interface ReconnectOptions {
  /** Reconnect after unexpected closes (default true). */
  enabled?: boolean;
  /** First delay in ms (default 500). */
  initialDelayMs?: number;
  /** Largest delay in ms (default 30 000). */
  maxDelayMs?: number;
  /** Growth factor per attempt (default 2). */
  factor?: number;
  /** Fraction of the delay randomly taken off, 0–1 (default 0.5: the delay is in [d/2, d]). */
  jitter?: number;
  /** Give up (state `closed`) after this many consecutive failed attempts (default: never). */
  maxAttempts?: number;
}

/** Options of {@link RealtimeClient}. */
export interface RealtimeClientOptions {
  /**
   * Service base URL (`https://host`, `http://host:8080`) or the full `ws(s)://host/api/v1/ws`
   * address; in browsers it may be relative to the page (e.g. `/`).
   */
  url: string;
  /** Owner JWT, device JWT or API key (contract §4.18), or a function returning the current one. */
  token: TokenSource;
  /** Owner sockets: the registered owner device (design §6, `&device_id=`). */
  deviceId?: string;
  /** WebSocket implementation; defaults to `globalThis.WebSocket` (browsers, Node 22+). */
  WebSocket?: WebSocketLikeConstructor;
  /** Where missed messages are read after (re)connecting; see `deviceCatchUp` / `conversationCatchUp`. */
  catchUp?: CatchUpSource | CatchUpSource[];
  /** Resume points per source key (from a previous `cursors()`): messages after them are delivered on the first connection. */
  initialCursors?: Record<string, string>;
  /** Outbound scanner hook (contract §6.1 rule 5). */
  scanner?: OutboundScanner;
  /** Offline queue capacity (default 50, contract §8). */
  outboxSize?: number;
  /** Received-message history kept in memory (default 500, contract §8). */
  historySize?: number;
  /** De-duplication window: number of message ids remembered (default 10 000). */
  dedupeSize?: number;
  /** Reconnection policy. */
  reconnect?: ReconnectOptions;
  /** Reject a sent message with `ack_timeout` when no ack arrives in this many ms (default 30 000). */
  ackTimeoutMs?: number;
  /**
   * Sends of one message before it fails (default 3): a 429 refusal is retried after its
   * `retry_after_ms`, and a message whose ack was lost with the socket is re-sent after
   * reconciliation; each send counts.
   */
  maxSendAttempts?: number;
  /** Longest wait before retrying a rate-limited message, in ms (default 30 000). */
  maxRetryDelayMs?: number;
  /** Give up on a connection attempt not authenticated within this many ms (default 15 000). */
  connectTimeoutMs?: number;
  /** Drop a socket that received nothing for this many ms (default 90 000, contract §6.1 rule 2; 0 disables). */
  deadTimeoutMs?: number;
  /** Page size of catch-up reads (default 200, the service maximum). */
  catchUpPageSize?: number;
  /** Most pages read per source and catch-up (default 50); more is reported as `catch_up_failed` and resumed later. */
  maxCatchUpPages?: number;
  /** Cursor order; default: numeric for digit strings, else lexicographic. */
  compareCursors?: (a: string, b: string) => number;
  /** How late a live message may arrive after one with a higher cursor (default 2 000 ms); see the class comment. */
  reorderWindowMs?: number;
}

/** Default cursor order: decimal strings compare numerically (the service's `seq`), others lexicographically. */
export function defaultCompareCursors(a: string, b: string): number {
  if (/^\d+$/.test(a) && /^\d+$/.test(b)) {
    const x = a.replace(/^0+(?=\d)/, '');
    const y = b.replace(/^0+(?=\d)/, '');
    if (x.length !== y.length) return x.length - y.length;
    return x < y ? -1 : x > y ? 1 : 0;
  }
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The numeric options with their defaults filled in (see {@link RealtimeClientOptions}). */
export type ResolvedOptions = Required<
  Pick<
    RealtimeClientOptions,
    'outboxSize' | 'historySize' | 'ackTimeoutMs' | 'connectTimeoutMs' | 'deadTimeoutMs' | 'catchUpPageSize' | 'maxCatchUpPages' | 'reorderWindowMs' | 'maxSendAttempts' | 'maxRetryDelayMs'
  >
>;

/** Fill in the defaults of the numeric options (outbox 50, history 500, ack 30 s, …; contract §8). */
export function resolveOptions(options: RealtimeClientOptions): ResolvedOptions {
  return {
    outboxSize: options.outboxSize ?? 50,
    historySize: options.historySize ?? 500,
    ackTimeoutMs: options.ackTimeoutMs ?? 30_000,
    connectTimeoutMs: options.connectTimeoutMs ?? 15_000,
    deadTimeoutMs: options.deadTimeoutMs ?? 90_000,
    catchUpPageSize: options.catchUpPageSize ?? 200,
    maxCatchUpPages: options.maxCatchUpPages ?? 50,
    reorderWindowMs: options.reorderWindowMs ?? 2_000,
    maxSendAttempts: Math.max(1, options.maxSendAttempts ?? 3),
    maxRetryDelayMs: options.maxRetryDelayMs ?? 30_000,
  };
}

/** The reconnection policy with its defaults filled in (500 ms doubling to 30 s, jitter 0.5, no attempt limit). */
export function resolveReconnect(r: ReconnectOptions = {}): Required<ReconnectOptions> {
  return {
    enabled: r.enabled ?? true,
    initialDelayMs: r.initialDelayMs ?? 500,
    maxDelayMs: r.maxDelayMs ?? 30_000,
    factor: r.factor ?? 2,
    jitter: Math.min(1, Math.max(0, r.jitter ?? 0.5)),
    maxAttempts: r.maxAttempts ?? Infinity,
  };
}

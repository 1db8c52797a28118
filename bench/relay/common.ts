/**
 * Types and helpers of the relay benchmark's orchestrator (run.ts), its load generator (load.ts, a
 * child process) and the bare `ws` relay baseline (bare-relay.ts); the spec, result, phase, latency
 * and header parts are shared with the room fan-out benchmark (bench/rooms).
 */

/** One side of a conversation: the device and the WebSocket URL its socket connects to. */
export interface Side {
  deviceId: string;
  /** Full WebSocket URL including credentials (ws scenarios); unused by the pg scenario. */
  url: string;
}

/** One pairwise conversation: an agent socket and an owner-device socket that talk to each other. */
export interface Pair {
  conversationId: string;
  groupId: string;
  topicId: string;
  agent: Side;
  owner: Side;
}

/** One measured phase: closed loop (`rate` undefined: send whenever the window allows) or open loop at `rate` msgs/s. */
export interface PhaseSpec {
  name: string;
  /** Offered load in messages per second over all senders; undefined = saturation (closed loop). */
  rate: number | undefined;
  /**
   * Instead of `rate`: offer this fraction of the msgs/s the `saturation` phase measured just
   * before in the same run (`--rate 50%`); see {@link resolvePhase}.
   */
  rateOfSaturation?: number;
  warmupMs: number;
  durationMs: number;
  /** Stop the measured window early once this many messages were sent in it. */
  maxMessages: number | undefined;
}

/**
 * What every benchmark's load spec carries (bench/relay `LoadSpec`, bench/rooms `RoomLoadSpec`):
 * the scenario's label, the send window, the phases and the drain limit.
 */
export interface LoadSpecBase {
  label: string;
  /** Most unacknowledged messages per sending socket (pg mode: always 1 per connection). */
  window: number;
  phases: PhaseSpec[];
  drainTimeoutMs: number;
  /** Bytes of the (random, opaque) ciphertext of each message (room message: of each envelope). */
  ciphertextBytes: number;
}

/** What the parent asks the relay load generator to do. */
export interface LoadSpec extends LoadSpecBase {
  /** `ws`: both sides of every pair send `message` frames; `pg`: one autocommit INSERT per message per writer. */
  mode: 'ws' | 'pg';
  pairs: Pair[];
  /** pg mode only. */
  databaseUrl?: string;
  tenantId?: string;
}

export interface LatencySummary {
  count: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
}

export interface PhaseResult {
  name: string;
  rate: number | undefined;
  /** Deliveries (ws) or commits (pg) that completed inside the measured window. */
  measuredMessages: number;
  measuredMs: number;
  msgsPerSec: number;
  /**
   * ws: send -> recipient's `message` frame; pg: INSERT round trip. Only messages scheduled in the
   * window. In open-loop phases latency counts from the scheduled send time, so time spent waiting
   * for a window slot is included (no coordinated omission).
   */
  latency: LatencySummary;
  /** CPU time (user + system) the load generator used inside the measured window. */
  clientCpuMs: number;
}

/** The counters every load generator reports for one scenario, warm-up and drain included, all phases. */
export interface LoadTotals {
  connectMs: number;
  /** Messages sent (ws) or INSERTs issued (pg). */
  sent: number;
  /** Acknowledgement frames (ws) or successful INSERTs (pg). */
  acked: number;
  /** Delivery frames received by recipients (ws); equal to `acked` for pg. */
  delivered: number;
  errors: number;
  firstError?: string;
  /** True when everything sent was acknowledged and delivered before each drain timed out. */
  drained: boolean;
}

export interface LoadResult extends LoadTotals {
  label: string;
  mode: 'ws' | 'pg';
  /** Sockets (ws) or connections (pg) used. */
  connections: number;
  phases: PhaseResult[];
}

export type ParentToChild<S = LoadSpec> = { type: 'run'; spec: S };
/** IPC from a load generator to its parent; `R` is the benchmark's result type. */
export type ChildToParent<R = LoadResult> =
  | { type: 'result'; result: R }
  | { type: 'failed'; error: string }
  /** Sent when a phase's measured window opens and closes, so the parent can sample server-side resources. */
  | { type: 'mark'; phase: string; edge: 'start' | 'end' };

/** Growable Float64 sample buffer with percentile summary (exact: sorts once at the end). */
export class Samples {
  private buf = new Float64Array(1 << 16);
  private n = 0;

  add(v: number): void {
    if (this.n === this.buf.length) {
      const next = new Float64Array(this.buf.length * 2);
      next.set(this.buf);
      this.buf = next;
    }
    this.buf[this.n++] = v;
  }

  summary(): LatencySummary {
    const a = this.buf.slice(0, this.n).sort();
    const q = (p: number) => (a.length === 0 ? NaN : a[Math.min(a.length - 1, Math.max(0, Math.ceil(p * a.length) - 1))]!);
    let sum = 0;
    for (const v of a) sum += v;
    return { count: a.length, p50: q(0.5), p90: q(0.9), p99: q(0.99), max: a.length ? a[a.length - 1]! : NaN, mean: a.length ? sum / a.length : NaN };
  }
}

/**
 * The message header used by every scenario: 24 bytes (32 base64 characters). Bytes 0-7 carry the
 * sender's `performance.now()` so the recipient measures latency without matching ids; the rest
 * is the socket index and per-socket sequence number (zero-padded, opaque to the server).
 */
export const HEADER_BYTES = 24;

export function encodeHeader(sentAt: number, socket: number, seq: number): Buffer {
  const b = Buffer.alloc(HEADER_BYTES);
  b.writeDoubleLE(sentAt, 0);
  b.writeUInt32LE(socket, 8);
  b.writeUInt32LE(seq, 12);
  return b;
}

export function headerSentAt(headerBase64: string): number {
  return Buffer.from(headerBase64, 'base64').readDoubleLE(0);
}

/** The sending socket's index and the message's per-socket sequence number, from a header of {@link encodeHeader}. */
export function headerSeq(headerBase64: string): { socket: number; seq: number } {
  const b = Buffer.from(headerBase64, 'base64');
  return { socket: b.readUInt32LE(8), seq: b.readUInt32LE(12) };
}

/**
 * The phase to run: `ps` itself, or for a `rateOfSaturation` phase a copy with `rate` set to that
 * fraction of the saturation msgs/s among `done` (the phases measured so far in this run).
 * @throws Error when no saturation phase ran before it.
 */
export function resolvePhase(ps: PhaseSpec, done: readonly PhaseResult[]): PhaseSpec {
  if (ps.rateOfSaturation === undefined) return ps;
  const sat = done.find((r) => r.rate === undefined);
  if (!sat) throw new Error(`phase ${ps.name}: a rate relative to saturation needs a saturation phase before it`);
  return { ...ps, rate: Math.max(1, Math.round(sat.msgsPerSec * ps.rateOfSaturation)) };
}

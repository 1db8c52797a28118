/**
 * The WebSocket side of a benchmark's load generator (bench/relay/load.ts `ws` mode,
 * bench/rooms/load.ts): sockets with a send window, the closed-loop and open-loop pump, one phase
 * run with its drain, and the counters every ws scenario reports. The benchmark supplies its frames
 * (`WsFrames`): how one message is sent, which event delivers it to a recipient (with the send time
 * in its header) and which event acknowledges it to the sender.
 *
 * Closed loop (`rate` undefined): every sender keeps `window` messages unacknowledged, sending as
 * soon as a slot frees. Open loop: the senders together offer `rate` messages/s on a fixed schedule,
 * spread evenly over one interval (still at most `window` unacknowledged per sender); latency counts
 * from the scheduled send time, so waiting for a window slot is included.
 */
import { performance } from 'node:perf_hooks';
import WebSocket from 'ws';
import { headerSentAt, type LoadTotals, type PhaseResult, type PhaseSpec } from './common.js';
import { Phase, sleep, waitFor } from './phase.js';

/** One socket of the load generator; `out` is what the benchmark prepared for its messages. */
export interface WsSender<T> {
  index: number;
  ws: WebSocket;
  out: T;
  /** Messages sent and not yet acknowledged or refused. */
  inflight: number;
  /** Sequence number of the last message sent (1-based). */
  seq: number;
  /** Open loop: scheduled time (performance.now(), ms) of the next message. */
  next: number;
}

/** The frames of one benchmark. */
export interface WsFrames<T> {
  /** The frame a recipient gets (`event`) and the field of its data holding the base64 header. */
  delivery: { event: string; header: string };
  /** Event of the frame acknowledging a message to its sender. */
  ack: string;
  /** Send message number `ep.seq` of `ep`, scheduled at `at` (performance.now(), ms). */
  send(ep: WsSender<T>, at: number): void;
  /** Further accounting of one acknowledgement (`data` of the frame), received at `now`. */
  onAck?(data: Record<string, unknown>, now: number): void;
}

/** The sockets of one scenario and its counters; `totals()` turns them into the scenario's `LoadTotals`. */
export class WsLoad<T> {
  /** The phase being measured; undefined between phases. */
  phase: Phase | undefined;
  readonly sockets: WsSender<T>[] = [];
  sent = 0;
  acked = 0;
  delivered = 0;
  errors = 0;
  firstError: string | undefined;
  /** Open loop: ms between two messages of one sender. */
  private interval = 0;
  private closing = false;

  constructor(
    private readonly window: number,
    private readonly frames: WsFrames<T>,
  ) {}

  /** Count an error; the first one is reported. */
  fail(what: string): void {
    this.errors++;
    this.firstError ??= what;
  }

  /**
   * Open one socket per target, one after the other, then wait 300 ms: Parley authenticates after
   * the upgrade, so the first frames are not queued behind it. Answers the time taken in ms.
   */
  async connect(targets: { url: string; out: T }[]): Promise<number> {
    const start = performance.now();
    for (const t of targets) this.sockets.push(await this.open(this.sockets.length, t.url, t.out));
    await sleep(300);
    return performance.now() - start;
  }

  private open(index: number, url: string, out: T): Promise<WsSender<T>> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, { perMessageDeflate: false });
      const ep: WsSender<T> = { index, ws, out, inflight: 0, seq: 0, next: 0 };
      ws.on('open', () => resolve(ep));
      ws.on('error', reject);
      ws.on('close', (code, reason) => {
        if (!this.closing) this.fail(`socket ${index} closed ${code} ${reason.toString()}`);
      });
      ws.on('message', (raw) => {
        const now = performance.now();
        const frame = JSON.parse(raw.toString()) as { event: string; data: Record<string, unknown> };
        if (frame.event === this.frames.delivery.event) {
          this.delivered++;
          this.phase?.record(headerSentAt(frame.data[this.frames.delivery.header] as string), now);
        } else if (frame.event === this.frames.ack) {
          this.acked++;
          this.frames.onAck?.(frame.data, now);
          ep.inflight--;
          this.pump(ep);
        } else if (frame.event === 'error') {
          this.fail(JSON.stringify(frame.data));
          ep.inflight--;
          this.pump(ep);
        } else if (frame.event === 'ping') {
          ws.send('{"event":"pong","data":{}}');
        }
      });
    });
  }

  private sendAt(ep: WsSender<T>, at: number): void {
    ep.seq++;
    ep.inflight++;
    this.sent++;
    this.frames.send(ep, at);
  }

  /** Send from `ep` what the current phase admits and its window allows. */
  private pump(ep: WsSender<T>): void {
    const p = this.phase;
    if (!p?.running) return;
    if (p.spec.rate === undefined) {
      while (ep.inflight < this.window) {
        const now = performance.now();
        if (!p.admit(now)) return;
        this.sendAt(ep, now);
      }
    } else {
      const now = performance.now();
      while (ep.inflight < this.window && ep.next <= now) {
        if (!p.admit(ep.next)) return;
        this.sendAt(ep, ep.next);
        ep.next += this.interval;
      }
    }
  }

  /**
   * Run phase `ps` with `senders` sending, then drain: wait up to `drainTimeoutMs` until no sender
   * has a message in flight and `delivered()` holds (every expected delivery arrived). Answers the
   * phase's measurement and whether the drain completed.
   */
  async runPhase(ps: PhaseSpec, senders: WsSender<T>[], drainTimeoutMs: number, delivered: () => boolean): Promise<{ result: PhaseResult; drained: boolean }> {
    const p = new Phase(ps, performance.now());
    this.phase = p;
    let ticker: NodeJS.Timeout | undefined;
    if (ps.rate !== undefined) {
      this.interval = (1000 * senders.length) / ps.rate;
      // Spread the senders evenly over one interval so the offered load is smooth.
      senders.forEach((ep, k) => (ep.next = p.t0 + (this.interval * k) / senders.length));
      ticker = setInterval(() => {
        for (const ep of senders) this.pump(ep);
      }, 1);
    }
    const stopper = setTimeout(() => p.stop(performance.now()), ps.warmupMs + ps.durationMs + 5);
    for (const ep of senders) this.pump(ep);
    while (p.running) await sleep(20);
    clearTimeout(stopper);
    if (ticker) clearInterval(ticker);
    const drained = await waitFor(() => senders.every((ep) => ep.inflight === 0) && delivered(), drainTimeoutMs);
    const result = p.result();
    this.phase = undefined;
    return { result, drained };
  }

  /** Close every socket (closes from now on are not errors). */
  async close(): Promise<void> {
    this.closing = true;
    for (const ep of this.sockets) ep.ws.close(1000);
    await sleep(50);
  }

  /** The counters, for the scenario's result. */
  totals(connectMs: number, drained: boolean): LoadTotals {
    const { sent, acked, delivered, errors, firstError } = this;
    return { connectMs, sent, acked, delivered, errors, ...(firstError ? { firstError } : {}), drained };
  }
}

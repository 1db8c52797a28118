/**
 * Measurement of one load phase in a benchmark's load-generator process (bench/relay/load.ts,
 * bench/rooms/load.ts): admission of sends into the warm-up or measured window, latency samples,
 * completions inside the window, and the load generator's own CPU. Opening and closing the measured
 * window is reported to the parent over IPC (`mark`) so it can sample server-side resources.
 */
import { performance } from 'node:perf_hooks';
import { Samples, type ChildToParent, type ParentToChild, type PhaseResult, type PhaseSpec } from './common.js';

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** CPU time (user + system) this process has used, in ms. */
export const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

/** Send one IPC message to the parent; resolves once it is written. */
export function reply<R>(msg: ChildToParent<R>): Promise<void> {
  return new Promise((resolve) => process.send!(msg, () => resolve()));
}

/**
 * The load generator's entry point: wait for the parent's one `run` message, answer `run(spec)` as
 * a `result` (or `failed` with the error's stack) and exit (0, or 1 after a failure). Exits with 1
 * when the parent goes away (e.g. interrupted) instead of loading a server that is gone.
 */
export function serveLoad<S, R>(run: (spec: S) => Promise<R>): void {
  process.on('disconnect', () => process.exit(1));
  process.once('message', (msg: ParentToChild<S>) => {
    run(msg.spec).then(
      async (result) => {
        await reply<R>({ type: 'result', result });
        process.exit(0);
      },
      async (err: unknown) => {
        await reply<R>({ type: 'failed', error: err instanceof Error ? (err.stack ?? err.message) : String(err) });
        process.exit(1);
      },
    );
  });
}

/** Measurement state of one phase. */
export class Phase {
  readonly samples = new Samples();
  readonly start: number;
  end: number;
  running = true;
  measuredSent = 0;
  measured = 0;
  private cpuStart = NaN;
  private cpuEnd = NaN;
  private readonly opener: NodeJS.Timeout;

  constructor(
    readonly spec: PhaseSpec,
    readonly t0: number,
  ) {
    this.start = t0 + spec.warmupMs;
    this.end = this.start + spec.durationMs;
    this.opener = setTimeout(() => {
      this.cpuStart = cpuMs();
      void reply({ type: 'mark', phase: spec.name, edge: 'start' });
    }, spec.warmupMs);
  }

  /** Whether a message scheduled at `at` may be sent; stops the phase at the end of the window. */
  admit(at: number): boolean {
    if (!this.running) return false;
    if (at >= this.end) return this.stop(at);
    if (at >= this.start) {
      if (this.spec.maxMessages !== undefined && this.measuredSent >= this.spec.maxMessages) return this.stop(at);
      this.measuredSent++;
    }
    return true;
  }

  stop(at: number): false {
    if (!this.running) return false;
    this.running = false;
    this.end = Math.min(this.end, at);
    clearTimeout(this.opener);
    this.cpuEnd = cpuMs();
    void reply({ type: 'mark', phase: this.spec.name, edge: 'end' });
    return false;
  }

  /** Whether `at` falls inside the measured window (as it stands: `end` moves when the phase stops early). */
  inWindow(at: number): boolean {
    return at >= this.start && at < this.end;
  }

  /** Record a completed message scheduled at `scheduledAt` and completed at `doneAt`. */
  record(scheduledAt: number, doneAt: number): void {
    if (this.inWindow(scheduledAt)) this.samples.add(doneAt - scheduledAt);
    if (this.inWindow(doneAt)) this.measured++;
  }

  result(): PhaseResult {
    const measuredMs = this.end - this.start;
    return {
      name: this.spec.name,
      rate: this.spec.rate,
      measuredMessages: this.measured,
      measuredMs,
      msgsPerSec: (this.measured / measuredMs) * 1000,
      latency: this.samples.summary(),
      clientCpuMs: this.cpuEnd - this.cpuStart,
    };
  }
}

/** Wait until `done()` holds (polling every 10 ms) or `timeoutMs` passes; answers whether it held. */
export async function waitFor(done: () => boolean, timeoutMs: number): Promise<boolean> {
  const until = performance.now() + timeoutMs;
  while (performance.now() < until) {
    if (done()) return true;
    await sleep(10);
  }
  return done();
}

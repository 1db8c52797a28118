/**
 * The timer of an outbox worker (webhooks, design §8.11; push, design §8.36): run `poll` every
 * `pollMs`, at once again when a poll claimed a full batch or `wake()` said new rows are due, never
 * two polls at a time, and on stop abort what is in flight (`signal`) and wait for the current poll.
 */

/** The timing of an outbox worker (`WebhookConfig`, config.ts: `WEBHOOK_*`), shared by the webhook and push workers. */
export interface OutboxTiming {
  /** Poll interval (ms) when the previous poll found less than a full batch. */
  pollMs: number;
  /** Per-request timeout (ms); a claimed row's lease is twice this plus 10 s. */
  timeoutMs: number;
  /** First retry delay (ms); doubles per attempt. */
  retryBaseMs: number;
  /** Attempts before a row is `failed`. */
  maxAttempts: number;
  /** Largest retry delay (ms). Default one hour. */
  maxBackoffMs?: number;
  /** Rows claimed (and sent concurrently) per poll. Default 50. */
  batchSize?: number;
}

/** What the loop runs: one poll, answering how many rows it claimed. */
export type Poll = (signal: AbortSignal) => Promise<number>;

export class PollLoop {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = true;
  private polling = false;
  private again = false;
  private abort = new AbortController();

  /**
   * @param poll one poll; a rejection is handed to `onError` and the loop goes on.
   * @param pollMs the pause after a poll that claimed less than `batchSize` rows (ms).
   */
  constructor(
    private readonly poll: Poll,
    private readonly pollMs: number,
    private readonly batchSize: number,
    private readonly onError: (err: unknown) => void,
  ) {}

  /** Aborts when the loop stops (requests in flight give up; their rows come back after their lease). */
  get signal(): AbortSignal {
    return this.abort.signal;
  }

  /** Start polling (idempotent). */
  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.abort = new AbortController();
    this.schedule(this.pollMs);
  }

  /** Stop polling, abort requests in flight and wait for the current poll. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.abort.abort();
    await this.running;
  }

  /**
   * Poll now instead of at the next tick (new rows are due): at once when idle, right after the
   * current poll otherwise. Does nothing while stopped. Wake-ups during a poll collapse into one.
   */
  wake(): void {
    if (this.stopped) return;
    if (this.polling) {
      this.again = true;
      return;
    }
    clearTimeout(this.timer);
    this.schedule(0);
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.polling = true;
      this.again = false;
      this.running = this.poll(this.abort.signal)
        .catch((err: unknown) => {
          this.onError(err);
          return 0;
        })
        .then((n) => {
          this.polling = false;
          this.schedule(n >= this.batchSize || this.again ? 0 : this.pollMs);
        });
    }, ms);
    this.timer.unref();
  }
}

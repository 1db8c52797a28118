/**
 * When the service stops: SIGTERM (process managers, `kill`), SIGINT (Ctrl-C) and SIGHUP (the
 * terminal closed), from the first moment of `npm start` on, and, under an npm script, the end of
 * the npm process that launched it.
 *
 * - A stop request before the service is up is remembered; start-up stops at its next step
 *   (main.ts), closing what it opened. After that, the registered handler drains the service.
 * - Repeated signals are one request: a Ctrl-C in a terminal reaches the service twice, once from
 *   the terminal and once forwarded by npm. Whatever the state, the process exits at the latest
 *   `forceAfterMs` after the first request.
 * - npm forwards SIGINT and SIGTERM to the script, but not SIGHUP, and nothing when it is killed
 *   (SIGKILL): the service would then live on without the process that was started, holding its
 *   port. So when an npm script launched it (`npm_lifecycle_event` is set; npm sets it for every
 *   script it runs, npm docs "scripts"), the service checks every `parentPollMs` whether its
 *   parent process changed (the parent ended and the process was re-parented) and stops if so.
 */

/** The signals that stop the service. */
export const STOP_SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;

/** Options of {@link watchStopSignals}. */
export interface StopWatchOptions {
  /** Longest time from the first stop request to the exit (ms). */
  forceAfterMs: number;
  /** Told once when stopping takes longer than `forceAfterMs`, just before the process exits with 1. */
  onForced: () => void;
  /** Stop when the parent process ends (default: when an npm script launched this process). */
  watchParent?: boolean;
  /** How often the parent is checked (ms; default 500). */
  parentPollMs?: number;
}

/** The stop requests of this process. */
export interface StopSignals {
  /** What asked to stop first (`SIGINT`, `SIGTERM`, `SIGHUP` or `parent exited`), once something did. */
  readonly requested: string | undefined;
  /**
   * From now on a stop request calls `handler` once (at once when one came already). Replaces the
   * previous handler.
   */
  onStop(handler: (reason: string) => void): void;
}

/** Listen for stop requests (see the file comment) for the rest of the process's life. */
export function watchStopSignals(opts: StopWatchOptions): StopSignals {
  let requested: string | undefined;
  let handler: ((reason: string) => void) | undefined;
  let handled = false;
  const fire = () => {
    if (handled || !handler || requested === undefined) return;
    handled = true;
    handler(requested);
  };
  const request = (reason: string) => {
    if (requested !== undefined) return;
    requested = reason;
    setTimeout(() => {
      opts.onForced();
      process.exit(1);
    }, opts.forceAfterMs).unref();
    fire();
  };
  for (const signal of STOP_SIGNALS) process.on(signal, () => request(signal));
  if (opts.watchParent ?? process.env.npm_lifecycle_event !== undefined) {
    const parent = process.ppid;
    const timer = setInterval(() => {
      if (process.ppid !== parent) {
        clearInterval(timer);
        request('parent exited');
      }
    }, opts.parentPollMs ?? 500);
    timer.unref();
  }
  return {
    get requested() {
      return requested;
    },
    onStop(h) {
      handler = h;
      handled = false;
      fire();
    },
  };
}

/**
 * Callbacks run after a committed change that others act on (a trust recompute, an operator tier
 * grant), so that they look at once instead of at their next poll — the marketplace's rental
 * monitor, for instance, without the changing module importing it.
 */
import type { FastifyBaseLogger } from 'fastify';

export class ChangeListeners {
  private readonly fns: (() => Promise<void>)[] = [];

  /** `what` names the change in the log line of a failing listener. */
  constructor(
    private readonly log: Pick<FastifyBaseLogger, 'error'>,
    private readonly what: string,
  ) {}

  /** Call `fn` after every committed change. */
  add(fn: () => Promise<void>): void {
    this.fns.push(fn);
  }

  /** Run every listener in turn; an error is logged, never thrown (the change itself is committed). */
  async run(): Promise<void> {
    for (const fn of this.fns) {
      try {
        await fn();
      } catch (err) {
        this.log.error({ err }, `a listener of ${this.what} failed`);
      }
    }
  }
}

/**
 * contract §8's message limit (60 per minute per device by default, `RATE_LIMIT_WS_MESSAGES_PER_MIN`)
 * as one budget per device for every way it sends: the gateway's rate-limited frames (`message`,
 * `room_message`, `a2a_message`) and the REST send routes (conversation, room, A2A and rental
 * messages) consume the same counter, so a device cannot double its rate by mixing the two.
 * Callers consume once the sending device is established as the caller's own, so nobody spends
 * another device's budget.
 */
import type { RateLimiterAbstract, RateLimiterRes } from 'rate-limiter-flexible';
import { AppError, ErrorCode } from './errors.js';

export class MessageRate {
  /** `limiter` counts per device id (memory or Redis); undefined when rate limits are off. */
  constructor(private readonly limiter: RateLimiterAbstract | undefined) {}

  /**
   * Count one message of `deviceId`.
   * @throws 429 AppError carrying `retryAfterMs` when the device's budget is spent; the store's own
   * failure as is (a 500, not a 429).
   */
  async consume(deviceId: string): Promise<void> {
    if (!this.limiter) return;
    try {
      await this.limiter.consume(deviceId);
    } catch (res) {
      if (res instanceof Error) throw res;
      throw new AppError(ErrorCode.RateLimited, `rate limit exceeded: ${this.limiter.points} messages per minute`, (res as RateLimiterRes).msBeforeNext);
    }
  }
}

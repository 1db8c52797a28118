/**
 * last_seen tracking (design §8.2: "seen" is any authenticated request, socket frame or
 * heartbeat). Writes are throttled per device (at most one per `minIntervalMs`) so that a busy
 * device costs one UPDATE per interval, not one per request.
 */
import type { Db } from '../../db/client.js';
import { withTenant } from '../../db/tenant.js';
import { touchDevice } from './repo.js';

export class LastSeenTracker {
  private readonly written = new Map<string, number>();

  constructor(
    private readonly db: Db,
    private readonly minIntervalMs = 30_000,
    private readonly onError: (err: unknown) => void = () => undefined,
  ) {}

  /** Record activity now; `force` writes even inside the throttle interval (disconnects). */
  seen(tenantId: string, deviceId: string, force = false): Promise<void> {
    const now = Date.now();
    const last = this.written.get(deviceId) ?? 0;
    if (!force && now - last < this.minIntervalMs) return Promise.resolve();
    this.written.set(deviceId, now);
    if (this.written.size > 100_000) this.written.clear();
    return withTenant(this.db, tenantId, (tx) => touchDevice(tx, deviceId, new Date(now))).then(
      () => undefined,
      this.onError,
    );
  }
}

/** Health (design §8.2): green when seen within 2 min, yellow within 15 min, red otherwise. */
export function health(lastSeen: Date | null, now = Date.now()): 'green' | 'yellow' | 'red' {
  if (!lastSeen) return 'red';
  const age = now - lastSeen.getTime();
  if (age <= 2 * 60_000) return 'green';
  if (age <= 15 * 60_000) return 'yellow';
  return 'red';
}

/**
 * Rental terms and amounts (design §8.23, §8.24). Pure functions over integer cents and hours.
 *
 * Term (hours) when the listing names none: per_task 24 (how long the task may run), per_hour 1,
 * per_day 24, monthly 720 (30 days). Amount: per_task the price; per_hour price × hours;
 * per_day price × ⌈hours / 24⌉; monthly price × ⌈hours / 720⌉.
 */
import type { PricingModel } from '@parley/protocol';

const DEFAULT_TERM_HOURS: Record<PricingModel, number> = { per_task: 24, per_hour: 1, per_day: 24, monthly: 720 };

/** The rental term in hours. */
export const termHoursOf = (model: PricingModel, termHours: number | null): number => termHours ?? DEFAULT_TERM_HOURS[model];

/** What the renter is charged, in cents, for `hours` of a listing priced `priceCents` per unit of `model`. */
export function amountOf(model: PricingModel, priceCents: number, hours: number): number {
  switch (model) {
    case 'per_task':
      return priceCents;
    case 'per_hour':
      return priceCents * hours;
    case 'per_day':
      return priceCents * Math.ceil(hours / 24);
    case 'monthly':
      return priceCents * Math.ceil(hours / 720);
  }
}

/**
 * The refund of a cancellation (design §8.24): time-based models refund the unused part of the
 * term pro rata (rounded down to the cent); a per_task rental whose task has started refunds
 * nothing; a rental not yet started (no `startsAt`) refunds what was charged.
 */
export function cancellationRefund(r: { pricingModel: PricingModel; amountCents: number; refundedCents: number; startsAt: Date | null; endsAt: Date | null; taskStartedAt: Date | null }, now: Date): number {
  const left = r.amountCents - r.refundedCents;
  if (!r.startsAt || !r.endsAt) return left;
  if (r.pricingModel === 'per_task') return r.taskStartedAt ? 0 : left;
  const term = r.endsAt.getTime() - r.startsAt.getTime();
  const unused = Math.max(0, r.endsAt.getTime() - Math.max(now.getTime(), r.startsAt.getTime()));
  if (term <= 0) return 0;
  return Math.min(left, Math.floor((r.amountCents * unused) / term));
}

/**
 * Pure rules of spend caps (docs/decisions.md "Spend caps"): UTC periods, pricing
 * token usage with the tenant's `model_prices`, and a period's spend against its cap. No I/O.
 */
import { SPEND_ALERT_THRESHOLDS, type ModelPrice, type ModelSpend, type PeriodSpend, type SpendAlertThreshold, type SpendPeriod, type SpendUnit } from '@parley/protocol';
import { addDays, dayStart, utcDay } from '../../lib/days.js';

/** A UTC period: its first day (`YYYY-MM-DD`) and the instant the next period starts. */
export interface PeriodBounds {
  period: SpendPeriod;
  start: string;
  resetsAt: Date;
}

/**
 * The UTC period containing `now`: `day` = the UTC calendar day, `month` = the UTC calendar month
 * (first day `YYYY-MM-01`, resets at the next month's first midnight UTC).
 */
export function periodOf(period: SpendPeriod, now: Date): PeriodBounds {
  const today = utcDay(now);
  if (period === 'day') return { period, start: today, resetsAt: dayStart(addDays(today, 1)) };
  const start = `${today.slice(0, 7)}-01`;
  return { period, start, resetsAt: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)) };
}

/** Token usage of one model over some days (the sums of its spans' `gen_ai.usage.*`). */
export interface ModelUsage {
  model: string;
  inputTokens: number;
  outputTokens: number;
}

/** The `*` key of the price table: the price of every model not listed. */
export const ANY_MODEL = '*';

/** Priced usage: totals and per model (cents null for a model without a price). */
export interface PricedUsage {
  tokens: number;
  cents: number;
  unpricedTokens: number;
  models: ModelSpend[];
}

/**
 * Price usage with a price table (cents per 1,000,000 input / output tokens; `*` prices models not
 * listed). A model without a price counts 0 cents and its tokens in `unpricedTokens`. Cents are
 * rounded to 1/10000 cent (display; caps compare these). Models sorted by name.
 */
export function priceUsage(usage: readonly ModelUsage[], prices: Readonly<Record<string, ModelPrice>>): PricedUsage {
  let tokens = 0;
  let cents = 0;
  let unpricedTokens = 0;
  const models: ModelSpend[] = [];
  for (const u of [...usage].sort((a, b) => (a.model < b.model ? -1 : a.model > b.model ? 1 : 0))) {
    const n = u.inputTokens + u.outputTokens;
    const price = Object.hasOwn(prices, u.model) ? prices[u.model] : Object.hasOwn(prices, ANY_MODEL) ? prices[ANY_MODEL] : undefined;
    const c = price ? round4((u.inputTokens * price.input_cents_per_mtok + u.outputTokens * price.output_cents_per_mtok) / 1e6) : null;
    tokens += n;
    if (c === null) unpricedTokens += n;
    else cents += c;
    models.push({ model: u.model, input_tokens: u.inputTokens, output_tokens: u.outputTokens, cents: c });
  }
  return { tokens, cents: round4(cents), unpricedTokens, models };
}

const round4 = (x: number) => Math.round(x * 10_000) / 10_000;

/** An agent's caps as the rules see them (limits in `unit`, null = no cap). */
export interface Caps {
  unit: SpendUnit;
  dailyLimit: number | null;
  monthlyLimit: number | null;
}

/** No caps: the answer for an agent without a row. */
export const NO_CAPS: Caps = { unit: 'tokens', dailyLimit: null, monthlyLimit: null };

/** The limit of `period` in `caps`. */
export const limitOf = (caps: Caps, period: SpendPeriod): number | null => (period === 'day' ? caps.dailyLimit : caps.monthlyLimit);

/**
 * A period's spend against its cap (the wire `PeriodSpend`): `used` in the cap's unit, `percent`
 * = used / limit × 100 (null without a cap), `over` when used ≥ limit (the budget is spent: the
 * budget stage refuses from 100 %).
 */
export function judgePeriod(bounds: PeriodBounds, priced: PricedUsage, caps: Caps): PeriodSpend {
  const limit = limitOf(caps, bounds.period);
  const used = caps.unit === 'tokens' ? priced.tokens : priced.cents;
  return {
    period: bounds.period,
    start: bounds.start,
    resets_at: bounds.resetsAt.toISOString(),
    tokens: priced.tokens,
    cents: priced.cents,
    unpriced_tokens: priced.unpricedTokens,
    limit,
    used,
    percent: limit === null ? null : round4((used / limit) * 100),
    over: limit !== null && used >= limit,
    models: priced.models,
  };
}

/** The alert thresholds a period's spend has reached (80 and/or 100), none without a cap. */
export const reachedThresholds = (p: PeriodSpend): SpendAlertThreshold[] => (p.percent === null ? [] : SPEND_ALERT_THRESHOLDS.filter((t) => p.percent! >= t));

/** The refusal detail of the budget stage for an over-cap period, naming the cap. */
export function capDetail(agent: string, p: PeriodSpend, unit: SpendUnit): string {
  const name = p.period === 'day' ? 'daily' : 'monthly';
  const span = p.period === 'day' ? `UTC day ${p.start}` : `UTC month ${p.start.slice(0, 7)}`;
  return `${agent} is over its ${name} spend cap of ${fmt(p.limit!, unit)}: ${fmt(p.used, unit)} spent in the ${span}; the cap resets at ${p.resets_at}`;
}

/** `1234 tokens` / `250 cents`. */
export const fmt = (n: number, unit: SpendUnit): string => `${Number.isInteger(n) ? n : n.toFixed(4)} ${unit}`;

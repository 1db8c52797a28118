/**
 * Pure helpers of the Spend screen (docs/decisions.md "Spend caps"): how a
 * period's spend against its cap is written and toned, and the parsing of the cap form's limits.
 */
import type { PeriodSpend, SpendUnit } from '@parley/sdk';

/** `1,234 tokens` or `$12.34` (cents written as dollars and cents, rounded to the cent). */
export function formatAmount(n: number, unit: SpendUnit): string {
  if (unit === 'tokens') return `${Math.round(n).toLocaleString('en-US')} tokens`;
  return `$${(n / 100).toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
}

/** `900 tokens of 1,000 tokens (90%)`, or the spend alone with "no cap". */
export function formatPeriod(p: PeriodSpend, unit: SpendUnit): string {
  if (p.limit === null || p.percent === null) return `${formatAmount(p.used, unit)} (no cap)`;
  return `${formatAmount(p.used, unit)} of ${formatAmount(p.limit, unit)} (${Math.floor(p.percent)}%)`;
}

/** Badge tone of a period: `bad` at or over the cap (refused), `warn` from 80 %, else `good`; `neutral` without a cap. */
export function periodTone(p: PeriodSpend): 'good' | 'warn' | 'bad' | 'neutral' {
  if (p.percent === null) return 'neutral';
  if (p.over) return 'bad';
  return p.percent >= 80 ? 'warn' : 'good';
}

/** Words of {@link periodTone}. */
export const toneWord = (p: PeriodSpend): string => ({ bad: 'over the cap', warn: 'near the cap', good: 'within the cap', neutral: 'no cap' })[periodTone(p)];

/**
 * A limit typed in the cap form: empty = no cap (null); else a whole number ≥ 1. For `cents`
 * the owner types dollars (`12.50` → 1250 cents). Answers `{error}` for anything else.
 */
export function parseLimit(text: string, unit: SpendUnit): { value: number | null } | { error: string } {
  const t = text.trim().replace(/,/g, '');
  if (t === '') return { value: null };
  if (unit === 'tokens') {
    if (!/^\d+$/.test(t) || Number(t) < 1) return { error: 'a whole number of tokens, at least 1 (empty: no cap)' };
    return { value: Number(t) };
  }
  if (!/^\d+(\.\d{1,2})?$/.test(t)) return { error: 'an amount in dollars such as 12.50 (empty: no cap)' };
  const cents = Math.round(Number(t) * 100);
  return cents >= 1 ? { value: cents } : { error: 'at least $0.01 (empty: no cap)' };
}

/** The form text of a stored limit (dollars for cents), empty without one. */
export const limitText = (limit: number | null, unit: SpendUnit): string => (limit === null ? '' : unit === 'tokens' ? String(limit) : (limit / 100).toFixed(2));

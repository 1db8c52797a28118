/**
 * Small formatting and parsing helpers shared by the governance screens: money in integer US
 * cents (design §8.24), comma-separated lists typed into inputs, local date-times of filter
 * inputs (design §8.22 `since` / `until`), enum words.
 */

const money = new Map<string, Intl.NumberFormat>();

/** Integer US cents as currency text, e.g. `1250` -> `$12.50` (design §8.24: money is integer cents, USD). */
export function formatCents(cents: number, locale = 'en-US'): string {
  let f = money.get(locale);
  if (!f) {
    f = new Intl.NumberFormat(locale, { style: 'currency', currency: 'USD' });
    money.set(locale, f);
  }
  return f.format(cents / 100);
}

const DOLLARS = /^\$?\s*(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d{1,2}))?$/;

/** A typed dollar amount (`12`, `12.5`, `$1,200.00`) as integer cents (design §8.24), or undefined when it is not one. */
export function parseDollars(text: string): number | undefined {
  const m = DOLLARS.exec(text.trim());
  if (!m) return undefined;
  const whole = Number(m[1]!.replaceAll(',', ''));
  const frac = Number((m[2] ?? '').padEnd(2, '0'));
  const cents = whole * 100 + frac;
  return Number.isSafeInteger(cents) ? cents : undefined;
}

/** A comma-separated input as a list: trimmed, empty items dropped, duplicates removed, order kept. */
export function splitList(text: string): string[] {
  return [...new Set(text.split(',').map((s) => s.trim()).filter((s) => s !== ''))];
}

/** A list back into the text of a comma-separated input. */
export function joinList(list: readonly string[] | undefined): string {
  return (list ?? []).join(', ');
}

/** A `datetime-local` input value (the owner's local time) as ISO 8601 UTC, or undefined when empty or invalid. */
export function localToIso(value: string): string | undefined {
  if (value.trim() === '') return undefined;
  const t = Date.parse(value);
  return Number.isFinite(t) ? new Date(t).toISOString() : undefined;
}

/** An enum value in words: `per_task` -> `per task`, `prev_hash_mismatch` -> `prev hash mismatch`. */
export function words(value: string): string {
  return value.replaceAll('_', ' ');
}

/** The first characters of a UUID, for tables (the full id in a tooltip). */
export function shortId(id: string): string {
  return id.length > 8 ? `${id.slice(0, 8)}…` : id;
}

/** What reading a form gives: the API body, or what the owner must fix (shown next to the form). */
export type FormResult<T> = { ok: true; body: T } | { ok: false; error: string };

/** `count` with its noun, singular for exactly one: `plural(1, 'agent')` -> `1 agent`, `plural(3, 'agent')` -> `3 agents`. */
export function plural(count: number, noun: string): string {
  return `${count} ${count === 1 ? noun : `${noun}s`}`;
}

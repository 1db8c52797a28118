/**
 * UTC day arithmetic of the trust engine and routes (contract §2.9 windows, §4.12 drift; docs/
 * trust-scoring.md "Windows"). A day is the string `YYYY-MM-DD` of a UTC calendar day; a window
 * of N days is the N UTC days ending with today. Pure: the clock is always passed in.
 */

/** Milliseconds in one day. */
export const DAY_MS = 86_400_000;

/** `YYYY-MM-DD` of a time (a Date or epoch milliseconds), in UTC. */
export const utcDay = (d: Date | number): string => new Date(d).toISOString().slice(0, 10);

/** Start (00:00:00.000 UTC) of the day `YYYY-MM-DD`. */
export const dayStart = (day: string): Date => new Date(`${day}T00:00:00.000Z`);

/** The UTC day `n` days after (negative: before) `day`. */
export const addDays = (day: string, n: number): string => utcDay(dayStart(day).getTime() + n * DAY_MS);

/** First day of the window of `days` UTC days ending with `now`'s day (inclusive): `addDays(utcDay(now), 1 − days)`. */
export const windowStartDay = (now: Date, days: number): string => addDays(utcDay(now), -(days - 1));

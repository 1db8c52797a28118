/**
 * Countdown wording (lib/countdown.ts; design §8.3 held-message expiry, §8.19 decision deadlines).
 */
import { describe, expect, it } from 'vitest';
import { formatDuration, remaining } from '../src/lib/countdown';

const DEADLINE = '2026-03-01T12:00:00.000Z';
const at = (msBefore: number) => Date.parse(DEADLINE) - msBefore;

describe('remaining', () => {
  it('shows minutes and seconds, rounding partial seconds up', () => {
    expect(remaining(DEADLINE, at(252_000))).toEqual({ expired: false, text: '4 min 12 s left', seconds: 252 });
    expect(remaining(DEADLINE, at(251_001)).text).toBe('4 min 12 s left');
    expect(remaining(DEADLINE, at(60_000)).text).toBe('1 min 0 s left');
  });

  it('shows seconds under a minute, down to 1 s just before the deadline', () => {
    expect(remaining(DEADLINE, at(42_000)).text).toBe('42 s left');
    expect(remaining(DEADLINE, at(1)).text).toBe('1 s left');
  });

  it('shows hours and days for far deadlines', () => {
    expect(remaining(DEADLINE, at((3600 + 5 * 60 + 30) * 1000)).text).toBe('1 h 5 min left');
    expect(remaining(DEADLINE, at(72 * 3600 * 1000)).text).toBe('3 d 0 h left');
    expect(remaining(DEADLINE, at((2 * 86400 + 3 * 3600) * 1000)).text).toBe('2 d 3 h left');
  });

  it('is expired at and after the deadline, and for an unparsable one', () => {
    expect(remaining(DEADLINE, at(0))).toEqual({ expired: true, text: 'expired', seconds: 0 });
    expect(remaining(DEADLINE, at(-5_000)).expired).toBe(true);
    expect(remaining('not a date', 0)).toEqual({ expired: true, text: 'expired', seconds: 0 });
  });
});

describe('formatDuration', () => {
  it('keeps the two largest units', () => {
    expect(formatDuration(0)).toBe('0 s');
    expect(formatDuration(59.2)).toBe('1 min 0 s');
    expect(formatDuration(3599)).toBe('59 min 59 s');
    expect(formatDuration(86399)).toBe('23 h 59 min');
  });
});

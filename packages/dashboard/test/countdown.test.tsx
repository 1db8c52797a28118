/**
 * The live Countdown (components/Countdown.tsx, lib/use-now.ts; design §8.19): a role=timer text
 * that ticks every second and reads "expired" at the deadline.
 */
import { act, cleanup, render, screen } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Countdown } from '../src/components/Countdown';

const START = Date.parse('2026-03-01T12:00:00.000Z');

describe('Countdown', () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(START);
  });
  afterEach(() => {
    cleanup();
    vi.useRealTimers();
  });

  it('counts down every second and shows expired at the deadline', () => {
    render(<Countdown deadline={new Date(START + 65_000).toISOString()} />);
    const timer = screen.getByRole('timer');
    expect(timer.textContent).toBe('1 min 5 s left');
    act(() => vi.advanceTimersByTime(1_000));
    expect(timer.textContent).toBe('1 min 4 s left');
    act(() => vi.advanceTimersByTime(5_000));
    expect(timer.textContent).toBe('59 s left');
    act(() => vi.advanceTimersByTime(58_000));
    expect(timer.textContent).toBe('1 s left');
    act(() => vi.advanceTimersByTime(1_000));
    expect(timer.textContent).toBe('expired');
    expect(timer.getAttribute('data-expired')).toBe('true');
    act(() => vi.advanceTimersByTime(10_000));
    expect(screen.getByRole('timer').textContent).toBe('expired');
  });

  it('shows expired for a past deadline and says so when there is none', () => {
    const { rerender } = render(<Countdown deadline={new Date(START - 1).toISOString()} />);
    expect(screen.getByRole('timer').textContent).toBe('expired');
    rerender(<Countdown deadline={null} />);
    expect(screen.queryByRole('timer')).toBeNull();
    expect(screen.getByText('No deadline')).toBeTruthy();
  });

  it('stops ticking when unmounted', () => {
    const { unmount } = render(<Countdown deadline={new Date(START + 10_000).toISOString()} />);
    expect(vi.getTimerCount()).toBe(1);
    unmount();
    expect(vi.getTimerCount()).toBe(0);
  });
});

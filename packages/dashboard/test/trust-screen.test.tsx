/**
 * Trust screen components as the owner sees them (design §8.14, §8.21): the fleet table sorts by
 * score and percentile from its header buttons (with aria-sort) and links each agent to its
 * page; the dimension bars write every score and fleet median as text.
 */
import { TRUST_DIMENSIONS, type TrustFleetAgent } from '@parley/sdk';
import { cleanup, fireEvent, render, screen, within } from '@testing-library/react';
import { MemoryRouter } from 'react-router';
import { afterEach, describe, expect, it } from 'vitest';
import { DimensionBars } from '../src/screens/trust/DimensionBars';
import { FleetTable } from '../src/screens/trust/FleetTable';
import { dimensionRows } from '../src/lib/trust-view';

afterEach(cleanup);

const fleet: TrustFleetAgent[] = [
  { agent_id: '11111111-1111-4111-8111-111111111111', hub_address: 'alpha', composite_score: 0.55, tier: 'unverified', percentile: 80 },
  { agent_id: '22222222-2222-4222-8222-222222222222', hub_address: 'bravo', composite_score: 0.91, tier: 'enterprise', percentile: 20 },
  { agent_id: '33333333-3333-4333-8333-333333333333', hub_address: null, composite_score: 0.72, tier: 'certified', percentile: 50 },
];

function names(): string[] {
  const body = screen.getAllByRole('rowgroup')[1]!;
  return within(body)
    .getAllByRole('link')
    .map((a) => a.textContent ?? '');
}

function header(name: RegExp): HTMLElement {
  return screen.getByRole('columnheader', { name });
}

describe('FleetTable', () => {
  const renderTable = () =>
    render(
      <MemoryRouter>
        <FleetTable agents={fleet} nameOf={(a) => a.hub_address ?? 'charlie'} />
      </MemoryRouter>,
    );

  it('starts by score, highest first, and links each agent to its trust page', () => {
    renderTable();
    expect(names()).toEqual(['bravo', 'charlie', 'alpha']);
    expect(header(/score/i).getAttribute('aria-sort')).toBe('descending');
    expect(header(/percentile/i).getAttribute('aria-sort')).toBe('none');
    expect(screen.getByRole('link', { name: 'alpha' }).getAttribute('href')).toBe(`/trust/${fleet[0]!.agent_id}`);
    expect(screen.getByText('enterprise')).toBeTruthy();
    expect(screen.getByText('0.91')).toBeTruthy();
  });

  it('sorts by percentile, then flips the order when the same header is pressed again', () => {
    renderTable();
    fireEvent.click(screen.getByRole('button', { name: /percentile/i }));
    expect(names()).toEqual(['alpha', 'charlie', 'bravo']);
    expect(header(/percentile/i).getAttribute('aria-sort')).toBe('descending');
    expect(header(/score/i).getAttribute('aria-sort')).toBe('none');
    fireEvent.click(screen.getByRole('button', { name: /percentile/i }));
    expect(names()).toEqual(['bravo', 'charlie', 'alpha']);
    expect(header(/percentile/i).getAttribute('aria-sort')).toBe('ascending');
    fireEvent.click(screen.getByRole('button', { name: /score/i }));
    expect(names()).toEqual(['bravo', 'charlie', 'alpha']);
    fireEvent.click(screen.getByRole('button', { name: /score/i }));
    expect(names()).toEqual(['alpha', 'charlie', 'bravo']);
    expect(screen.getByText(/sorted by score \(lowest first\)/i)).toBeTruthy();
  });
});

describe('DimensionBars', () => {
  it('writes each of the 12 scores next to its fleet median, and marks the median on the bar', () => {
    const dims = <T,>(f: (i: number) => T) => Object.fromEntries(TRUST_DIMENSIONS.map((d, i) => [d, f(i)])) as Record<(typeof TRUST_DIMENSIONS)[number], T>;
    const rows = dimensionRows(
      { dimensions: dims((i) => i / 20), sources: dims((i) => (i === 0 ? 'fleet_median' : 'telemetry')) },
      { dimensions: dims((i) => ({ median: i === 1 ? null : 0.5, stddev: null, mean: null })) },
    );
    render(<DimensionBars rows={rows} />);
    expect(screen.getAllByRole('row')).toHaveLength(13);
    const compliance = screen.getByRole('row', { name: /compliance/i });
    expect(within(compliance).getByText('0.40')).toBeTruthy();
    expect(within(compliance).getByText('0.50')).toBeTruthy();
    expect(within(compliance).getByText('telemetry')).toBeTruthy();
    const bar = compliance.querySelector('.bar');
    expect((bar?.querySelector('span') as HTMLElement).style.width).toBe('40%');
    expect((bar?.querySelector('i') as HTMLElement).style.left).toContain('50%');
    const responsiveness = screen.getByRole('row', { name: /responsiveness/i });
    expect(within(responsiveness).getByText('—')).toBeTruthy();
    expect(responsiveness.querySelector('.bar i')).toBeNull();
    expect(within(screen.getByRole('row', { name: /uptime/i })).getByText(/fleet median \(partial data\)/)).toBeTruthy();
  });
});

/**
 * The Spend screen against a fake REST client: fleet totals and each agent's
 * day and month against its caps (tone words: within / near / over), one agent's spend per model,
 * and the cap form (dollars typed for a cents cap, a bad limit refused in place, empty = no cap);
 * plus the pure helpers of lib/spend-view.ts.
 */
import type { AgentSpend, Device, PeriodSpend } from '@parley/sdk';
import { cleanup, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { Route, Routes } from 'react-router';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { formatPeriod, parseLimit, periodTone } from '../src/lib/spend-view';
import { renderInApp } from './render';

const A1 = '00000000-0000-4000-8000-0000000000a1';
const A2 = '00000000-0000-4000-8000-0000000000a2';
const AT = '2026-03-31T12:00:00.000Z';

const period = (over: Partial<PeriodSpend>): PeriodSpend => ({
  period: 'day',
  start: '2026-03-31',
  resets_at: '2026-04-01T00:00:00.000Z',
  tokens: 0,
  cents: 0,
  unpriced_tokens: 0,
  limit: null,
  used: 0,
  percent: null,
  over: false,
  models: [],
  ...over,
});
const spendOf = (agent_id: string, hub_address: string | null, unit: 'tokens' | 'cents', day: Partial<PeriodSpend>, month: Partial<PeriodSpend>): AgentSpend => ({
  agent_id,
  hub_address,
  unit,
  day: period(day),
  month: period({ period: 'month', start: '2026-03-01', ...month }),
  as_of: AT,
});
const alpha = spendOf('00000000-0000-4000-8000-0000000000a1', 'alpha', 'tokens', { tokens: 900, used: 900, limit: 1000, percent: 90 }, { tokens: 5000, used: 5000, limit: 100000, percent: 5 });
const bravo = spendOf(
  A2,
  null,
  'cents',
  { tokens: 1_000_000, cents: 300, used: 300, limit: 300, percent: 100, over: true },
  { tokens: 3_000_000, cents: 900, used: 900, limit: null, models: [{ model: 'big', input_tokens: 3_000_000, output_tokens: 0, cents: 900 }, { model: 'odd', input_tokens: 10, output_tokens: 5, cents: null }] },
);
const agentDevice = (device_id: string, name: string): Device => ({
  device_id,
  name,
  kind: 'agent',
  status: 'ACTIVE',
  platform: 'bot',
  health: 'green',
  last_seen: AT,
  fingerprint: 'f',
  identity_public_key: 'k',
  ephemeral_public_key: 'e',
  enrolled_at: AT,
  webhook_url: null,
});

const client = {
  getFleetSpend: vi.fn(async () => ({
    as_of: AT,
    agents: [alpha, bravo],
    totals: { day: { tokens: 1_000_900, cents: 300, unpriced_tokens: 900, agents_over: 1 }, month: { tokens: 3_005_000, cents: 900, unpriced_tokens: 5015, agents_over: 0 } },
  })),
  getAgentSpend: vi.fn(async () => bravo),
  getAgentSpendCap: vi.fn(async () => ({ agent_id: A2, unit: 'cents', daily_limit: 300, monthly_limit: null, updated_by: 'owner', updated_at: AT })),
  setAgentSpendCap: vi.fn(async (_id: string, body: { unit: string; daily_limit: number | null; monthly_limit: number | null }) => ({ agent_id: A2, ...body, updated_by: 'owner', updated_at: '2026-03-31T13:00:00.000Z' })),
  listDevices: vi.fn(async () => ({ devices: [agentDevice(A1, 'Alpha bot'), agentDevice(A2, 'Bravo bot')] })),
  listHubIdentities: vi.fn(async () => ({ identities: [{ id: 'i1', hub_address: 'alpha', display_name: 'Alpha', device_id: A1 }] })),
};

vi.mock('../src/app/owner-context', () => ({ useOwner: () => ({ client, deviceId: 'o', fingerprint: 'f' }) }));
const { Spend } = await import('../src/screens/Spend');

afterEach(cleanup);

function show(path: string) {
  return renderInApp(
    <Routes>
      <Route path="/spend" element={<Spend />} />
      <Route path="/spend/:agentId" element={<Spend />} />
    </Routes>,
    path,
  );
}

describe('spend view helpers', () => {
  it('writes a period against its cap, tones it, and parses limits (dollars for cents)', () => {
    expect(formatPeriod(alpha.day, 'tokens')).toBe('900 tokens of 1,000 tokens (90%)');
    expect(formatPeriod(bravo.day, 'cents')).toBe('$3.00 of $3.00 (100%)');
    expect(formatPeriod(bravo.month, 'cents')).toBe('$9.00 (no cap)');
    expect([alpha.day, alpha.month, bravo.day, bravo.month].map(periodTone)).toEqual(['warn', 'good', 'bad', 'neutral']);
    expect(parseLimit('1,500', 'tokens')).toEqual({ value: 1500 });
    expect(parseLimit('12.50', 'cents')).toEqual({ value: 1250 });
    expect(parseLimit('  ', 'cents')).toEqual({ value: null });
    for (const [t, u] of [['0', 'tokens'], ['1.5', 'tokens'], ['-3', 'tokens'], ['1.234', 'cents'], ['0.00', 'cents'], ['ten', 'cents']] as const) expect(parseLimit(t, u)).toHaveProperty('error');
  });
});

describe('Spend screen', () => {
  it('shows the fleet totals and each agent against its caps', async () => {
    show('/spend');
    const table = await screen.findByRole('table');
    const rows = within(table).getAllByRole('row');
    expect(rows).toHaveLength(3);
    expect(within(rows[1]!).getByRole('link', { name: /alpha/i }).getAttribute('href')).toBe(`/spend/${A1}`);
    expect(within(rows[1]!).getByText(/900 tokens of 1,000 tokens \(90%\)/)).toBeTruthy();
    expect(within(rows[1]!).getByText('near the cap')).toBeTruthy();
    expect(within(rows[2]!).getByText('over the cap')).toBeTruthy();
    const totals = screen.getByLabelText('Fleet totals');
    expect(totals.textContent).toMatch(/1,000,900 tokens, \$3\.00 \(900 tokens without a price\); 1 agent over a cap/);
  });

  it('shows one agent per model and saves its caps (dollars → cents), refusing a bad limit in place', async () => {
    show(`/spend/${A2}`);
    expect((await screen.findByTestId('spend-day')).textContent).toMatch(/\$3\.00 of \$3\.00 \(100%\) — over the cap/);
    expect(screen.getByText('no price')).toBeTruthy();
    const daily = (await screen.findByLabelText(/daily cap/i)) as HTMLInputElement;
    expect(daily.value).toBe('3.00');
    fireEvent.change(daily, { target: { value: '2.5x' } });
    fireEvent.click(screen.getByRole('button', { name: 'Save caps' }));
    expect((await screen.findByRole('status')).textContent).toMatch(/Daily cap: an amount in dollars/);
    expect(client.setAgentSpendCap).not.toHaveBeenCalled();
    fireEvent.change(daily, { target: { value: '4.25' } });
    fireEvent.change(screen.getByLabelText(/monthly cap/i), { target: { value: '100' } });
    fireEvent.click(screen.getByRole('button', { name: 'Save caps' }));
    await waitFor(() => expect(client.setAgentSpendCap).toHaveBeenCalledWith(A2, { unit: 'cents', daily_limit: 425, monthly_limit: 10000 }));
  });
});

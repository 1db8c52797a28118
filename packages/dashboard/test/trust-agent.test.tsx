/**
 * The Trust screen for one agent against a fake REST client: a new agent's warm-up answer shows
 * its 12 dimensions marked as warm-up, the agent panel agrees with the fleet's count of scored
 * agents, and no text speaks in specification references.
 */
import { TRUST_DIMENSIONS, type Device, type TrustFleet, type TrustScore } from '@parley/sdk';
import { cleanup, screen, within } from '@testing-library/react';
import { Route, Routes } from 'react-router';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { renderInApp } from './render';

const AGENT = '00000000-0000-4000-8000-00000000000a';
const NOW = '2026-03-01T12:00:00.000Z';
const EARLIER = '2026-03-01T06:00:00.000Z';
const dims = <T,>(v: T) => Object.fromEntries(TRUST_DIMENSIONS.map((d) => [d, v])) as Record<(typeof TRUST_DIMENSIONS)[number], T>;

const warmupScore: TrustScore = {
  agent_id: AGENT,
  hub_address: null,
  window: '7d',
  composite_score: 0.5,
  tier: 'unverified',
  dimensions: dims(0.5),
  percentile: 50,
  computed_at: NOW,
  sources: dims('warmup' as const),
};
const emptyFleet: TrustFleet = { window: '7d', computed_at: null, count: 0, agents: [], dimensions: dims({ median: null, stddev: null, mean: null }) };
const fleetOf = (score: TrustScore): TrustFleet => ({
  ...emptyFleet,
  computed_at: score.computed_at,
  count: 1,
  agents: [{ agent_id: score.agent_id, hub_address: null, composite_score: score.composite_score, tier: score.tier, percentile: score.percentile }],
  dimensions: dims({ median: 0.5, stddev: 0, mean: 0.5 }),
});
const agent: Device = {
  device_id: AGENT,
  name: 'scout',
  kind: 'agent',
  status: 'ACTIVE',
  platform: null,
  health: 'green',
  last_seen: null,
  fingerprint: 'f',
  identity_public_key: 'k',
  ephemeral_public_key: 'e',
  enrolled_at: NOW,
  webhook_url: null,
};

const state = { score: warmupScore, fleet: emptyFleet };
const client = {
  getTrustFleet: vi.fn(async () => state.fleet),
  getTrustScore: vi.fn(async () => state.score),
  getTrustHistory: vi.fn(async () => ({ agent_id: AGENT, days: 7, history: [], tier_changes: [] })),
  getTrustDrift: vi.fn(async () => ({ agent_id: AGENT, window: '7d', baseline: null, dimensions: dims(null), alert: false, computed_at: NOW })),
  recomputeTrust: vi.fn(),
  recalibrateTrustDrift: vi.fn(),
  getTrustReport: vi.fn(),
  getTrustReportHtml: vi.fn(),
  listDevices: vi.fn(async () => ({ devices: [agent] })),
  listHubIdentities: vi.fn(async () => ({ identities: [] })),
};

vi.mock('../src/app/owner-context', () => ({ useOwner: () => ({ client, deviceId: 'owner' }) }));

const { Trust } = await import('../src/screens/Trust');

afterEach(cleanup);

async function showAgent(score: TrustScore, fleet: TrustFleet) {
  state.score = score;
  state.fleet = fleet;
  renderInApp(
    <Routes>
      <Route path="/trust/:agentId" element={<Trust />} />
    </Routes>,
    `/trust/${AGENT}`,
  );
  await screen.findByTestId('trust-composite');
  await screen.findByText(/scored agents?/);
}

const section = (name: RegExp) => screen.getByRole('region', { name });

describe('Trust screen, one agent', () => {
  it('shows the 12 warm-up dimensions of an agent the engine has not scored yet, and calls it not scored like the fleet does', async () => {
    await showAgent(warmupScore, emptyFleet);
    expect(within(section(/^fleet$/i)).getByText(/0 scored agents/)).toBeTruthy();
    const dimensions = section(/^dimensions$/i);
    const rows = within(dimensions).getAllByTestId(/^dimension-/);
    expect(rows).toHaveLength(12);
    for (const row of rows) {
      expect(within(row).getByText('0.50')).toBeTruthy();
      expect(within(row).getByText(/warm-up/)).toBeTruthy();
    }
    expect(within(dimensions).getByTestId('trust-warmup-note').textContent).toMatch(/not been scored yet/);
    const composite = screen.getByTestId('trust-composite');
    expect(composite.textContent).toMatch(/not scored yet/);
    expect(composite.textContent).toMatch(/warm-up score/);
    expect(composite.textContent).not.toMatch(/percentile|computed/);
    expect(screen.queryByText(/no trust data/i)).toBeNull();
  });

  it('gives a scored agent in warm-up its computation time and percentile, as one of the fleet', async () => {
    const scored = { ...warmupScore, computed_at: EARLIER };
    await showAgent(scored, fleetOf(scored));
    expect(within(section(/^fleet$/i)).getByText(/1 scored agent\b/)).toBeTruthy();
    const composite = screen.getByTestId('trust-composite');
    expect(composite.textContent).toMatch(/50th percentile in your fleet/);
    expect(within(composite).getByRole('time').getAttribute('dateTime')).toBe(EARLIER);
    expect(screen.getByTestId('trust-warmup-note').textContent).toMatch(/first 48 hours/);
    expect(within(section(/^dimensions$/i)).getAllByTestId(/^dimension-/)).toHaveLength(12);
  });

  it('writes no specification references, and says what the compliance report needs', async () => {
    await showAgent(warmupScore, emptyFleet);
    expect(document.body.textContent).not.toMatch(/SPEC|§/);
    expect(within(section(/compliance report/i)).getByText(/enterprise-tier agents only; this agent's tier is unverified/)).toBeTruthy();
  });
});

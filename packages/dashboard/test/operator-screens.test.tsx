/**
 * The platform operator screen against a fake REST client (docs/decisions.md "Platform operators
 * and operator tier grants"): the navigation offers it to operators only; certification review
 * lists identities with profile, trust, capabilities and the current grant, filters them, and
 * sets a tier with a reason (a blank reason is refused before any call); dispute resolution lists
 * open disputes with their evidence references and notes and resolves one with a partial refund
 * in cents; a non-operator who opens the page is told what it is for. axe-core structure rules.
 */
import type { Dispute, HubReviewEntry } from '@parley/sdk';
import { cleanup, fireEvent, screen, waitFor, within } from '@testing-library/react';
import axe from 'axe-core';
import { Route, Routes } from 'react-router';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { renderInApp } from './render';

const AT = '2026-03-01T12:00:00.000Z';
const T_R = '00000000-0000-4000-8000-0000000000e1';
const T_D = '00000000-0000-4000-8000-0000000000e2';
const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';

const entry = (over: Partial<HubReviewEntry> = {}): HubReviewEntry => ({
  id: '00000000-0000-4000-8000-0000000000a1',
  hub_address: 'research-bot',
  did: 'did:hub:research-bot',
  display_name: 'Research bot',
  description: 'Finds and summarizes sources.',
  trust_tier: 'unverified',
  tier_source: 'computed',
  trust_score: 0.5,
  capabilities: ['research', 'summarize'],
  enrolled_at: AT,
  last_active: null,
  tier_grant_reason: null,
  tier_grant_expires_at: null,
  created_at: AT,
  ...over,
});
const granted = entry({ id: '00000000-0000-4000-8000-0000000000a2', hub_address: 'trusted', display_name: 'Trusted', trust_tier: 'certified', tier_source: 'operator', tier_grant_reason: 'manual review', tier_grant_expires_at: null });
const dispute: Dispute = {
  dispute_id: '00000000-0000-4000-8000-0000000000d1',
  rental_id: '00000000-0000-4000-8000-0000000000c1',
  renter_tenant_id: T_R,
  developer_tenant_id: T_D,
  filed_by_tenant_id: T_R,
  status: 'open',
  reason: 'The agent never answered',
  evidence_refs: [{ type: 'trace', id: TRACE }],
  notes: [{ author_tenant_id: T_D, note: 'We were up the whole time', evidence_refs: [], created_at: AT }],
  outcome: null,
  amount_cents: null,
  resolution_note: null,
  created_at: AT,
  resolved_at: null,
};

const client = {
  listHubReview: vi.fn(async (q: { query?: string }) => ({ identities: q.query ? [granted] : [entry(), granted], next_cursor: null })),
  grantHubIdentityTier: vi.fn(async (id: string, body: { tier: string }) => ({ ...entry({ id }), trust_tier: body.tier, tier_source: 'operator' })),
  listDisputes: vi.fn(async () => ({ disputes: [dispute], next_cursor: null })),
  resolveDispute: vi.fn(async () => ({ ...dispute, status: 'resolved', outcome: 'partial', amount_cents: 1250, resolution_note: 'half', resolved_at: AT })),
};
const owner = { client, deviceId: 'dev', fingerprint: 'f', operator: true, session: { sub: 'ops@platform.test' } };

vi.mock('../src/app/owner-context', () => ({
  useOwner: () => owner,
  useAuth: () => ({ session: { sub: 'ops@platform.test', provider: 'dev' }, signOut: () => undefined, socket: 'open', warning: undefined }),
}));

const { Operator } = await import('../src/screens/operator/Operator');
const { Layout } = await import('../src/app/Layout');

function showOperator(path = '/operator') {
  return renderInApp(
    <Routes>
      <Route path="/operator/:view?" element={<Operator />} />
    </Routes>,
    path,
  );
}

async function axeViolations(container: HTMLElement): Promise<string[]> {
  const r = await axe.run(container, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] }, rules: { 'color-contrast': { enabled: false }, region: { enabled: false } } });
  return r.violations.map((v) => `${v.id}: ${v.nodes.map((n) => String(n.target)).join(' ')}`);
}

beforeEach(() => {
  sessionStorage.clear();
  vi.clearAllMocks();
  owner.operator = true;
});
afterEach(cleanup);

describe('navigation', () => {
  it('offers "Platform operator" to operators only', () => {
    renderInApp(<Layout />);
    expect(screen.getByRole('link', { name: 'Platform operator' }).getAttribute('href')).toBe('/operator');
    cleanup();
    owner.operator = false;
    renderInApp(<Layout />);
    expect(screen.queryByRole('link', { name: 'Platform operator' })).toBeNull();
    expect(screen.getByRole('link', { name: 'Settings' })).toBeTruthy();
  });

  it('tells a non-operator what the page is for, and calls nothing', () => {
    owner.operator = false;
    showOperator();
    expect(screen.getByText(/This page is for platform operators/)).toBeTruthy();
    expect(client.listHubReview).not.toHaveBeenCalled();
    expect(client.listDisputes).not.toHaveBeenCalled();
  });
});

describe('certification review', () => {
  it('shows each identity with profile, trust, capabilities and the current grant; filters', async () => {
    const { container } = showOperator();
    const card = await screen.findByTestId('review-research-bot');
    expect(card.textContent).toContain('Research bot');
    expect(card.textContent).toContain('did:hub:research-bot');
    expect(card.textContent).toContain('research, summarize');
    expect(card.textContent).toContain('0.50');
    expect(card.textContent).toContain('computed');
    const other = screen.getByTestId('review-trusted');
    expect(other.textContent).toContain('granted by an operator');
    expect(other.textContent).toContain('manual review (no end)');
    // Disputes are not read on this view (every read is audited).
    expect(client.listDisputes).not.toHaveBeenCalled();
    expect(await axeViolations(container)).toEqual([]);
    fireEvent.change(screen.getByLabelText('Address or name'), { target: { value: 'trust' } });
    fireEvent.click(screen.getByRole('button', { name: 'Filter' }));
    await waitFor(() => expect(screen.queryByTestId('review-research-bot')).toBeNull());
    expect(client.listHubReview).toHaveBeenLastCalledWith({ query: 'trust' });
  });

  it('refuses a blank reason in place, then sets the tier with the reason', async () => {
    showOperator();
    const card = await screen.findByTestId('review-research-bot');
    fireEvent.click(within(card).getByText('Set tier of research-bot'));
    const form = within(card).getByRole('form', { name: 'Set the tier of research-bot' });
    fireEvent.click(within(form).getByRole('button', { name: 'Set tier' }));
    expect(within(form).getByRole('alert').textContent).toMatch(/reason/);
    expect(client.grantHubIdentityTier).not.toHaveBeenCalled();
    fireEvent.change(within(form).getByLabelText('Tier'), { target: { value: 'enterprise' } });
    fireEvent.change(within(form).getByLabelText('Reason'), { target: { value: ' verified the company ' } });
    fireEvent.click(within(form).getByRole('button', { name: 'Set tier' }));
    expect((await within(card).findByTestId(`granted-${entry().id}`)).textContent).toContain('enterprise');
    expect(client.grantHubIdentityTier).toHaveBeenCalledWith(entry().id, { tier: 'enterprise', reason: 'verified the company' });
  });
});

describe('dispute resolution', () => {
  it('lists open disputes with evidence and notes, and resolves one with a partial refund in cents', async () => {
    const { container } = showOperator('/operator/disputes');
    const card = await screen.findByTestId(`dispute-${dispute.dispute_id}`);
    expect(client.listDisputes).toHaveBeenCalledWith({ status: 'open' });
    expect(client.listHubReview).not.toHaveBeenCalled();
    expect(card.textContent).toContain('The agent never answered');
    expect(card.textContent).toContain(`trace ${TRACE}`);
    expect(card.textContent).toContain('developer');
    expect(card.textContent).toContain('We were up the whole time');
    expect(await axeViolations(container)).toEqual([]);
    fireEvent.click(within(card).getByLabelText(/Partial refund/));
    fireEvent.change(within(card).getByLabelText('Amount to refund (USD)'), { target: { value: '12.50' } });
    fireEvent.change(within(card).getByLabelText('Resolution note'), { target: { value: 'half the term was served' } });
    fireEvent.click(within(card).getByRole('button', { name: 'Resolve dispute' }));
    await waitFor(() => expect(client.resolveDispute).toHaveBeenCalledWith(dispute.dispute_id, { outcome: 'partial', amount_cents: 1250, note: 'half the term was served' }));
  });

  it('a partial refund without an amount is refused before any call', async () => {
    showOperator('/operator/disputes');
    const card = await screen.findByTestId(`dispute-${dispute.dispute_id}`);
    fireEvent.click(within(card).getByLabelText(/Partial refund/));
    fireEvent.change(within(card).getByLabelText('Resolution note'), { target: { value: 'n' } });
    fireEvent.click(within(card).getByRole('button', { name: 'Resolve dispute' }));
    expect(within(card).getByRole('alert').textContent).toMatch(/amount/);
    expect(client.resolveDispute).not.toHaveBeenCalled();
  });
});

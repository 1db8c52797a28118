/**
 * A new user's first hour and the platform operator's screens, in Debian's Chromium against a
 * real server serving the built app (PGlite; PostgreSQL in CI):
 * - a first sign-in (new owner, no tenant yet) never answers 403 and never shows an error status
 *   or "No owner devices" on the way to the Agents screen;
 * - "Keep me signed in on this browser": with it, a new page of the same browser (the tab was
 *   closed) is still signed in with the same owner device; without it, it is not; sign-out ends it;
 * - the audit log names the owner, the owner device and an agent next to their ids;
 * - the Trust screen's Recompute button sits in the Fleet header row, level with its title;
 * - a platform operator (its subject in PLATFORM_OPERATOR_SUBS) sees "Platform operator",
 *   certifies another tenant's hub identity with a reason, and resolves an open dispute between
 *   two other tenants with a partial refund; other owners do not see the entry.
 * Every screen is checked with axe-core (no serious or critical violation) and saved as a screenshot.
 */
import fs from 'node:fs';
import path from 'node:path';
import { ParleyClient } from '@parley/sdk';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { activeAgent, newOwner, type Owner, startApp, type TestApp, hubOwnerKey, activeRental } from '@parley/server/testing';
import { DIST, launch, screenshot, seriousViolations } from './browser.js';

const STAMP = Date.now().toString(36);
const OWNER_EMAIL = `first-${STAMP}@example.com`;
const OPERATOR_EMAIL = `ops-${STAMP}@platform.test`;
/** Text that must never show during a first sign-in: an error with its status, or an empty owner-device list. */
const NEVER = ['(403)', 'No owner devices', 'could not start'];

describe('first sign-in, keep me signed in, audit names, platform operator (Chromium)', () => {
  let t: TestApp;
  let browser: Browser;
  const contexts: BrowserContext[] = [];
  const audited: string[] = [];

  async function check(page: Page, name: string) {
    await screenshot(page, name);
    const problems = await seriousViolations(page);
    expect(problems, `${name}: ${JSON.stringify(problems, null, 1)}`).toEqual([]);
    audited.push(name);
  }

  async function newContext(): Promise<BrowserContext> {
    const c = await browser.newContext({ bypassCSP: true, viewport: { width: 1280, height: 900 } });
    contexts.push(c);
    return c;
  }

  /** Sign in with the development provider on `page`, optionally keeping the session on this browser. */
  async function signIn(page: Page, email: string, keep = false) {
    await page.goto(`${t.baseUrl}/sign-in`);
    await page.getByLabel('E-mail address').fill(email);
    if (keep) await page.getByLabel('Keep me signed in on this browser').check();
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Agents & devices' }).waitFor({ timeout: 60_000 });
    await page.getByRole('cell', { name: /this browser/ }).waitFor();
  }

  /** The owner signed in on `page`, for API calls: its token and tenant. */
  async function ownerOf(page: Page): Promise<Owner> {
    const raw = await page.evaluate(() => sessionStorage.getItem('parley.session') ?? localStorage.getItem('parley.session'));
    const { token, sub } = JSON.parse(raw!) as { token: string; sub: string };
    const me = await new ParleyClient({ baseUrl: t.baseUrl, ownerToken: token }).getMe();
    return { sub, token, tenantId: me.tenant_id!, auth: { authorization: `Bearer ${token}` } };
  }

  async function openScreen(page: Page, label: string, heading: string) {
    await page.getByRole('navigation', { name: 'Screens' }).getByRole('link', { name: label, exact: true }).click();
    await page.getByRole('heading', { level: 1, name: heading }).waitFor();
  }

  beforeAll(async () => {
    if (!fs.existsSync(path.join(DIST, 'index.html'))) throw new Error('the web app is not built: run "npm run build -w @parley/dashboard"');
    t = await startApp({ listen: true, env: { DASHBOARD_DIR: DIST, RATE_LIMIT_ENROLL_PER_10MIN: '1000', PLATFORM_OPERATOR_SUBS: OPERATOR_EMAIL } });
    browser = await launch();
  });

  afterAll(async () => {
    for (const c of contexts) await c.close().catch(() => undefined);
    await browser?.close();
    await t?.close();
  });

  let first: Page;

  it('a first sign-in shows no 403 and no "No owner devices" at any moment; no operator entry', async () => {
    const context = await newContext();
    // Every text the document ever holds, recorded from the first byte on (the page's own script can't hide a flash).
    await context.addInitScript((never: string[]) => {
      const seen: string[] = [];
      (window as unknown as { __seen: string[] }).__seen = seen;
      new MutationObserver(() => {
        const text = document.documentElement?.textContent ?? '';
        for (const n of never) if (text.includes(n) && !seen.includes(n)) seen.push(n);
      }).observe(document, { subtree: true, childList: true, characterData: true });
    }, NEVER);
    first = await context.newPage();
    const forbidden: string[] = [];
    const failed: string[] = [];
    first.on('response', (r) => {
      if (r.status() === 403) forbidden.push(`${r.request().method()} ${r.url()}`);
      else if (r.status() >= 400 && r.url().startsWith(t.baseUrl)) failed.push(`${r.status()} ${r.request().method()} ${r.url()}`);
    });
    await first.goto(`${t.baseUrl}/sign-in`);
    await first.getByRole('heading', { name: 'Development sign-in' }).waitFor();
    await check(first, 'first-01-sign-in');
    await signIn(first, OWNER_EMAIL);
    await first.waitForLoadState('networkidle');
    expect(forbidden).toEqual([]);
    expect(failed).toEqual([]);
    expect(await first.evaluate(() => (window as unknown as { __seen: string[] }).__seen)).toEqual([]);
    // The list is there, with this browser as the one owner device.
    expect(await first.getByRole('cell', { name: /this browser/ }).count()).toBe(1);
    expect(await first.getByRole('link', { name: 'Platform operator' }).count()).toBe(0);
    await check(first, 'first-02-agents');
    // Not an operator: the page says what it is for.
    await first.goto(`${t.baseUrl}/operator`);
    await first.getByText(/This page is for platform operators/).waitFor();
  });

  it('audit log: the owner, the owner device and an agent by name next to their ids', async () => {
    const owner = await ownerOf(first);
    const agent = await activeAgent(t, owner);
    await new ParleyClient({ baseUrl: t.baseUrl, ownerToken: owner.token }).renameDevice(agent.deviceId, { name: 'audit-bot' });
    await first.goto(`${t.baseUrl}/audit`);
    await first.getByRole('heading', { level: 1, name: 'Audit log' }).waitFor();
    const names = first.getByTestId('audit-name');
    await names.filter({ hasText: 'agent audit-bot' }).first().waitFor();
    await names.filter({ hasText: /^owner device Chromium \(web app\)/ }).first().waitFor();
    await names.filter({ hasText: /^you/ }).first().waitFor();
    // The raw id stays next to the name.
    expect(await names.filter({ hasText: 'agent audit-bot' }).first().textContent()).toContain(agent.deviceId);
    await check(first, 'first-03-audit-names');
  });

  it('trust: Recompute sits in the Fleet header row, level with its title', async () => {
    await first.goto(`${t.baseUrl}/trust`);
    const title = first.getByRole('heading', { level: 2, name: 'Fleet' });
    const button = first.getByRole('button', { name: 'Recompute' });
    await button.waitFor();
    const [h, b] = [(await title.boundingBox())!, (await button.boundingBox())!];
    const middle = b.y + b.height / 2;
    expect(middle).toBeGreaterThan(h.y);
    expect(middle).toBeLessThan(h.y + h.height);
    expect(b.x).toBeGreaterThan(h.x + h.width);
    await button.click();
    await first.getByRole('status').filter({ hasText: /Scored \d+ agents?/ }).waitFor();
    // The outcome below does not move the button.
    const after = (await button.boundingBox())!;
    expect(Math.abs(after.y - b.y)).toBeLessThan(1);
    await check(first, 'first-04-trust-recompute');
  });

  it('keep me signed in: a new page of the same browser is still signed in, with the same owner device; sign-out ends it', async () => {
    const context = await newContext();
    const page = await context.newPage();
    const email = `kept-${STAMP}@example.com`;
    await page.goto(`${t.baseUrl}/sign-in`);
    await page.getByLabel('Keep me signed in on this browser').waitFor();
    await check(page, 'keep-01-sign-in-checkbox');
    await signIn(page, email, true);
    const fingerprint = await page.getByTestId('owner-fingerprint').textContent();
    await page.close();
    const again = await context.newPage();
    await again.goto(`${t.baseUrl}/`);
    await again.getByRole('heading', { level: 1, name: 'Agents & devices' }).waitFor({ timeout: 60_000 });
    expect(await again.getByTestId('owner-fingerprint').textContent()).toBe(fingerprint);
    const devices = (await new ParleyClient({ baseUrl: t.baseUrl, ownerToken: (await ownerOf(again)).token }).listDevices()).devices;
    expect(devices.filter((d) => d.kind === 'owner')).toHaveLength(1);
    await again.getByRole('button', { name: 'Sign out' }).click();
    await again.getByRole('heading', { name: 'Development sign-in' }).waitFor();
    await again.close();
    const afterSignOut = await context.newPage();
    await afterSignOut.goto(`${t.baseUrl}/`);
    await afterSignOut.getByRole('heading', { name: 'Development sign-in' }).waitFor();
  });

  it('without it, a new page of the same browser signs in again', async () => {
    const context = await newContext();
    const page = await context.newPage();
    await signIn(page, `tab-${STAMP}@example.com`);
    await page.close();
    const again = await context.newPage();
    await again.goto(`${t.baseUrl}/`);
    await again.getByRole('heading', { name: 'Development sign-in' }).waitFor();
    expect(await again.evaluate(() => localStorage.getItem('parley.session'))).toBeNull();
  });

  it('a platform operator certifies another tenant’s identity and resolves a dispute with a partial refund', async () => {
    // Another tenant's uncertified identity, and a dispute between two more tenants with evidence.
    const applicant = await newOwner(t, 'Applicant Co');
    const address = `cand-${STAMP}`;
    const reg = await t.request({ method: 'POST', url: '/api/v1/hub/identities', headers: applicant.auth, payload: { hub_address: address, display_name: 'Candidate agent', description: 'Translates contracts.', public_key: hubOwnerKey(), capabilities: ['translate'] } });
    expect(reg.status).toBe(201);
    const { buyer, rentalId } = await activeRental(t);
    const evidence = (await t.request({ method: 'GET', url: '/api/v1/audit/events?limit=1', headers: buyer.owner.auth })).body.events[0].event_id as string;
    const filed = await t.request({ method: 'POST', url: `/api/v1/marketplace/rentals/${rentalId}/dispute`, headers: buyer.owner.auth, payload: { reason: 'The agent stopped answering', evidence_refs: [{ type: 'audit_event', id: evidence }] } });
    expect(filed.status, JSON.stringify(filed.body)).toBe(201);
    const disputeId = filed.body.dispute_id as string;

    const page = await (await newContext()).newPage();
    await signIn(page, OPERATOR_EMAIL);
    await openScreen(page, 'Platform operator', 'Platform operator');
    // Certification review: find the candidate, read its profile, certify it with a reason.
    await page.getByLabel('Address or name').fill(address);
    await page.getByRole('button', { name: 'Filter' }).click();
    const card = page.getByTestId(`review-${address}`);
    await card.waitFor();
    expect(await card.textContent()).toContain('Translates contracts.');
    expect(await card.textContent()).toContain('translate');
    await check(page, 'operator-01-certification');
    await card.getByText(`Set tier of ${address}`).click();
    await card.getByLabel('Tier', { exact: true }).selectOption('certified');
    await card.getByLabel('Reason').fill('Reviewed the owner and a test run');
    await card.getByRole('button', { name: 'Set tier' }).click();
    await card.getByTestId(`granted-${reg.body.id}`).waitFor();
    const profile = await t.request({ method: 'GET', url: `/api/v1/hub/${address}/profile` });
    expect(profile.body).toMatchObject({ trust_tier: 'certified', tier_source: 'operator' });
    await card.getByText('Reviewed the owner and a test run').waitFor();
    await check(page, 'operator-02-certified');

    // Dispute resolution: the open dispute with its evidence; a partial refund of $5.00.
    await page.getByRole('navigation', { name: 'Operator views' }).getByRole('link', { name: 'Disputes' }).click();
    const dispute = page.getByTestId(`dispute-${disputeId}`);
    await dispute.waitFor();
    expect(await dispute.textContent()).toContain('The agent stopped answering');
    expect(await dispute.textContent()).toContain(`audit event ${evidence}`);
    await check(page, 'operator-03-disputes');
    await dispute.getByLabel(/Partial refund/).check();
    await dispute.getByLabel('Amount to refund (USD)').fill('5.00');
    await dispute.getByLabel('Resolution note').fill('Half of the first hour was lost');
    await dispute.getByRole('button', { name: 'Resolve dispute' }).click();
    await dispute.waitFor({ state: 'detached' });
    const resolved = await new ParleyClient({ baseUrl: t.baseUrl, ownerToken: buyer.owner.token }).getDispute(disputeId);
    expect(resolved).toMatchObject({ status: 'resolved', outcome: 'partial', amount_cents: 500, resolution_note: 'Half of the first hour was lost' });
    await page.getByLabel('Resolved').check();
    await page.getByTestId(`resolution-${disputeId}`).filter({ hasText: '$5.00 refunded' }).waitFor();
    await check(page, 'operator-04-resolved');
    expect(audited.length).toBeGreaterThanOrEqual(9);
  });
});

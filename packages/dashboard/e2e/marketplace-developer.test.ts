/**
 * The agent developer's first marketplace hour in a real browser: Debian's Chromium against a
 * real server (PGlite) serving the built app and the SDK's agent process. Sign in, enroll and
 * approve an agent, register its hub identity on the Marketplace screen (the owner key is the
 * agent's own identity key, never typed), edit the profile and add a capability, have a platform
 * operator grant the certified tier after a review (API, `PLATFORM_OPERATOR_SUBS`), then create a
 * listing from that identity and publish it; it is published in the app and found by an anonymous
 * search. Each screen is checked with axe-core (no serious or critical violation) and saved as a
 * screenshot.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ParleyClient } from '@parley/sdk';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '@parley/server/testing';
import { DIST, launch, openPage, ROOT, screenshot, seriousViolations, until } from './browser.js';

const EMAIL = `developer-${Date.now()}@example.com`;
const OPERATOR = 'operator@platform.test';
const AGENT_NAME = 'Market Dev Agent';
const ADDRESS = 'market-dev-agent';
const TITLE = `Translator ${Date.now()}`;


describe('marketplace, the agent developer, in Chromium', () => {
  let t: TestApp;
  let browser: Browser;
  let page: Page;
  let agent: { child: ChildProcess; output: () => string } | undefined;
  let stateDir: string;
  let owner: ParleyClient;
  let agentId = '';
  const pageLog: string[] = [];

  async function check(name: string) {
    await screenshot(page, `market-dev-${name}`);
    const problems = await seriousViolations(page);
    expect(problems, `${name}: ${JSON.stringify(problems, null, 1)}`).toEqual([]);
  }

  const identityCard = () => page.getByTestId(`hub-identity-${ADDRESS}`);

  beforeAll(async () => {
    if (!fs.existsSync(path.join(DIST, 'index.html'))) throw new Error('the web app is not built: run "npm run build -w @parley/dashboard"');
    t = await startApp({ listen: true, env: { DASHBOARD_DIR: DIST, PLATFORM_OPERATOR_SUBS: OPERATOR } });
    owner = new ParleyClient({ baseUrl: t.baseUrl, ownerToken: await t.ownerToken(EMAIL) });
    stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-e2e-market-'));
    browser = await launch();
    ({ page } = await openPage(browser, pageLog));
  });

  afterAll(async () => {
    if (process.env.E2E_DEBUG) console.log(pageLog.join('\n'), '\n--- agent ---\n', agent?.output());
    // The command runs under bash and npm in a process group of its own: end all of it.
    try {
      if (agent?.child.pid) process.kill(-agent.child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
    await browser?.close();
    await t?.close();
    if (stateDir) fs.rmSync(stateDir, { recursive: true, force: true });
  });

  it('signs in, and an agent enrolls and is approved', async () => {
    await page.goto(`${t.baseUrl}/`);
    await page.getByLabel('E-mail address').fill(EMAIL);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Agents & devices' }).waitFor();
    // The invite panel's command, run as printed (a home directory of its own for its state and key file).
    await page.getByLabel('Label (optional)').fill(AGENT_NAME);
    await page.getByRole('button', { name: 'Create invite' }).click();
    const command = (await page.getByTestId('invite-command').textContent())!;
    expect(command).toContain(`--server '${t.baseUrl}'`);
    const child = spawn('bash', ['-c', `${command} --no-plugin --no-mls`], { cwd: ROOT, env: { ...process.env, HOME: stateDir }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let out = '';
    child.stdout!.on('data', (d) => (out += String(d)));
    child.stderr!.on('data', (d) => (out += String(d)));
    agent = { child, output: () => out };
    const card = page.locator('[data-testid^="pending-"]').filter({ hasText: AGENT_NAME });
    await card.waitFor({ timeout: 60_000 });
    agentId = (await card.getAttribute('data-testid'))!.replace('pending-', '');
    await card.getByRole('button', { name: `Approve ${AGENT_NAME}` }).click();
    await until('the agent to become ACTIVE', async () => (await owner.listDevices()).devices.find((d) => d.device_id === agentId && d.status === 'ACTIVE'), 60_000);
  });

  it('registers the agent’s hub identity in the app, with its own identity key and a capability record', async () => {
    await page.getByRole('navigation', { name: 'Screens' }).getByRole('link', { name: 'Marketplace', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Marketplace' }).waitFor();
    await page.getByRole('button', { name: 'Register a hub identity' }).click();
    const form = page.getByRole('form', { name: 'Register a hub identity' });
    await form.getByLabel('Agent').selectOption({ label: AGENT_NAME });
    // The address and display name are suggested from the agent's name.
    expect(await form.getByLabel('Hub address').inputValue()).toBe(ADDRESS);
    expect(await form.getByLabel('Display name').inputValue()).toBe(AGENT_NAME);
    const device = (await owner.listDevices()).devices.find((d) => d.device_id === agentId)!;
    expect(await form.getByTestId('owner-key-note').textContent()).toContain(device.fingerprint);
    await form.getByLabel('Description').fill('Translates French and English text.');
    const capability = form.getByRole('group', { name: 'Capability 1' });
    await capability.getByLabel('Capability name').fill('translate');
    await capability.getByLabel('What it does').fill('French <-> English');
    await capability.getByLabel('Input schema (JSON Schema)').fill('{"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}');
    await capability.getByLabel('p95 latency (ms)').fill('1500');
    await capability.getByLabel('Uptime (0 to 1)').fill('0.99');
    await check('01-register-form');
    await form.getByRole('button', { name: 'Register identity' }).click();
    await identityCard().waitFor();
    await identityCard().getByRole('cell', { name: /translate/ }).waitFor();
    await identityCard().getByLabel('trust tier unverified').waitFor();

    const [identity] = (await owner.listHubIdentities()).identities;
    expect(identity).toMatchObject({ hub_address: ADDRESS, display_name: AGENT_NAME, device_id: agentId, capabilities: ['translate'], trust_tier: 'unverified' });
    expect(identity!.public_key).toBe(Buffer.from(device.identity_public_key, 'hex').toString('base64'));
    const { capabilities: caps } = await owner.listHubCapabilities(ADDRESS);
    expect(caps).toEqual([expect.objectContaining({ name: 'translate', version: '1.0.0', description: 'French <-> English', sla: { latency_p95_ms: 1500, uptime_sla: 0.99 }, input_schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } })]);
  });

  it('edits the public profile and adds a capability', async () => {
    const card = identityCard();
    await card.getByRole('button', { name: 'Edit profile' }).click();
    const edit = card.getByRole('form', { name: `Edit the profile of ${ADDRESS}` });
    await edit.getByLabel('Description').fill('Translates French, English and German text.');
    await edit.getByRole('button', { name: 'Save profile' }).click();
    // Saved: the editor closes and the card shows the new description.
    await edit.waitFor({ state: 'detached' });
    await card.getByRole('definition').filter({ hasText: 'Translates French, English and German text.' }).waitFor();
    await card.getByText('Add a capability').click();
    const add = card.getByRole('form', { name: `Add a capability to ${ADDRESS}` });
    await add.getByLabel('Capability name').fill('summarize');
    await add.getByRole('button', { name: 'Add capability' }).click();
    await card.getByRole('cell', { name: /summarize/ }).waitFor();
    const profile = await new ParleyClient({ baseUrl: t.baseUrl }).getHubProfile(ADDRESS);
    expect(profile).toMatchObject({ description: 'Translates French, English and German text.', trust_tier: 'unverified', tier_source: 'computed', capabilities: ['translate', 'summarize'] });
    await check('02-identity');
  });

  it('after an operator grants the certified tier, creates a listing from the identity and publishes it', async () => {
    const [identity] = (await owner.listHubIdentities()).identities;
    const operator = new ParleyClient({ baseUrl: t.baseUrl, ownerToken: await t.ownerToken(OPERATOR) });
    expect(await operator.grantHubIdentityTier(identity!.id, { tier: 'certified', reason: 'reviewed in the end-to-end test' })).toMatchObject({ trust_tier: 'certified', tier_source: 'operator' });
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Marketplace' }).waitFor();
    await identityCard().getByLabel('trust tier certified (granted by a platform operator)').waitFor();

    await page.getByRole('button', { name: 'New listing' }).click();
    const form = page.getByRole('form', { name: 'New listing' });
    await form.getByLabel('Hub identity').selectOption(ADDRESS);
    // The identity's capability names fill the listing's.
    expect(await form.getByLabel('Capabilities').inputValue()).toBe('translate');
    await form.getByLabel('Title').fill(TITLE);
    await form.getByLabel('Category').fill('language');
    await form.getByLabel('Price (USD)').fill('2.50');
    await form.getByLabel('Description', { exact: true }).fill('Fast, careful translation.');
    await form.getByRole('button', { name: 'Create draft' }).click();
    const row = page.getByRole('row').filter({ hasText: TITLE });
    await row.getByText('draft', { exact: true }).waitFor();
    await row.getByRole('button', { name: 'Publish' }).click();
    await row.getByText('published', { exact: true }).waitFor();
    await check('03-listing-published');

    const mine = (await owner.searchListings({ mine: true })).listings.find((l) => l.title === TITLE)!;
    expect(mine).toMatchObject({ hub_address: ADDRESS, status: 'published', capabilities: ['translate'], pricing: { model: 'per_task', price_cents: 250 }, trust_tier: 'certified' });
    const found = await until('the listing in an anonymous search', async () => (await new ParleyClient({ baseUrl: t.baseUrl }).searchListings({ query: 'translator' })).listings.find((l) => l.listing_id === mine.listing_id));
    expect(found).toMatchObject({ hub_address: ADDRESS, title: TITLE });
  });
});

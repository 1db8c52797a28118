/**
 * The owners' web app in a real browser: Debian's Chromium (playwright-core)
 * against a real server (PGlite; PostgreSQL in CI) serving the built app, and the SDK's agent
 * process (`parley-agent enroll`). One owner's journey, step by step: sign in (development
 * provider), create an invite, see the agent's enrollment arrive live, compare fingerprints and
 * approve, chat both ways with decryption in the page (the database holds only ciphertext) and
 * read receipts both ways (ticks), answer a decision before its deadline, release a held room
 * message, see a trust score and the audit chain verify, keep a draft across an expired session,
 * revoke the agent and see it go. Every screen is checked with axe-core (no serious or critical
 * violation) and saved as a screenshot.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ParleyClient, RealtimeClient } from '@parley/sdk';
import { nodeWebSocket } from '@parley/sdk/node';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scanForPlaintext } from '../../../demo/db-scan.js';
import { startApp, type TestApp } from '@parley/server/testing';
import { DIST, launch, openPage, ROOT, screenshot, seriousViolations, until } from './browser.js';

const EMAIL = `owner-${Date.now()}@example.com`;
const HELLO = `hello from the browser ${Date.now()}`;

interface AgentProcess {
  child: ChildProcess;
  output: () => string;
  exit: Promise<number | null>;
}

function startAgent(args: string[]): AgentProcess {
  const script = path.join(ROOT, 'packages/sdk/src/node/agent-cli.ts');
  const child = spawn(process.execPath, ['--conditions=parley-source', '--import', 'tsx', script, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d) => (out += String(d)));
  child.stderr!.on('data', (d) => (out += String(d)));
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output: () => out, exit };
}


describe('owner web app in Chromium', () => {
  let t: TestApp;
  let browser: Browser;
  let page: Page;
  let agent: AgentProcess | undefined;
  let stateDir: string;
  let owner: ParleyClient;
  let agentId = '';
  const audited: string[] = [];
  const pageLog: string[] = [];

  /** Screenshot and axe-check the current screen. */
  async function check(name: string) {
    await screenshot(page, name);
    const problems = await seriousViolations(page);
    expect(problems, `${name}: ${JSON.stringify(problems, null, 1)}`).toEqual([]);
    audited.push(name);
  }

  async function open(label: string, heading: string | RegExp) {
    await page.getByRole('navigation', { name: 'Screens' }).getByRole('link', { name: label, exact: true }).click();
    await page.getByRole('heading', { level: 1, name: heading }).waitFor();
  }

  beforeAll(async () => {
    if (!fs.existsSync(path.join(DIST, 'index.html'))) throw new Error('the web app is not built: run "npm run build -w @parley/dashboard" (npm ci does it)');
    t = await startApp({ listen: true, env: { DASHBOARD_DIR: DIST } });
    owner = new ParleyClient({ baseUrl: t.baseUrl, ownerToken: await t.ownerToken(EMAIL) });
    stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-e2e-agent-'));
    browser = await launch();
    ({ page } = await openPage(browser, pageLog));
  });

  afterAll(async () => {
    // On failure, what the page and the agent said is the first thing to read.
    if (process.env.E2E_DEBUG) console.log(pageLog.join('\n'), '\n--- agent ---\n', agent?.output());
    if (agent && agent.child.exitCode === null) agent.child.kill('SIGKILL');
    await browser?.close();
    await t?.close();
    if (stateDir) fs.rmSync(stateDir, { recursive: true, force: true });
  });

  it('signs in with the development provider; the first sign-in provisions the tenant and this browser as an owner device', async () => {
    await page.goto(`${t.baseUrl}/`);
    await page.getByRole('heading', { name: 'Development sign-in' }).waitFor();
    expect(await page.getByRole('note').textContent()).toMatch(/Development only/);
    await check('01-sign-in');
    await page.getByLabel('E-mail address').fill(EMAIL);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Agents & devices' }).waitFor();
    const fingerprint = (await page.getByTestId('owner-fingerprint').textContent())!;
    expect(fingerprint).toMatch(/^([0-9a-f]{4} ){7}[0-9a-f]{4}$/);
    const owners = (await owner.listDevices()).devices.filter((d) => d.kind === 'owner');
    expect(owners.map((d) => d.fingerprint)).toEqual([fingerprint]);
    await page.getByText('open', { exact: true }).waitFor();
  });

  it('creates an invite (token once, with a QR code); the enrolling agent appears live and is approved after the fingerprint check', async () => {
    await page.getByLabel('Label (optional)').fill('e2e agent');
    await page.getByRole('button', { name: 'Create invite' }).click();
    const token = (await page.getByTestId('invite-token').textContent())!;
    // The panel says what to run on the agent's machine, with this token and this service.
    const command = (await page.getByTestId('invite-command').textContent())!;
    expect(command).toContain(`--invite '${token}' --server '${t.baseUrl}'`);
    expect(token).toMatch(/^svc_tok_/);
    await page.getByRole('img', { name: 'QR code of the invite token' }).waitFor();
    await check('02-agents-invite');

    // Plain state files, chosen explicitly: the test reads the device JWT from agent.json below.
    agent = startAgent(['enroll', '--invite', token, '--server', t.baseUrl, '--state-dir', stateDir, '--insecure-plain-store', '--name', 'e2e-agent', '--no-plugin', '--no-mls']);
    const printed = await until('the agent to print its fingerprint', () => /fingerprint ((?:[0-9a-f]{4} ){7}[0-9a-f]{4})/.exec(agent!.output())?.[1], 60_000);
    // No reload: the device_pending event refreshes the screen.
    const card = page.locator('[data-testid^="pending-"]').filter({ hasText: 'e2e-agent' });
    await card.waitFor();
    expect(await card.getByTestId('pending-fingerprint').textContent()).toBe(printed);
    // The enrollment consumed the invite: its token leaves the panel.
    await page.getByTestId('invite-token').waitFor({ state: 'detached', timeout: 10_000 });
    await check('03-agents-pending');
    agentId = (await card.getAttribute('data-testid'))!.replace('pending-', '');
    await card.getByRole('button', { name: 'Approve e2e-agent' }).click();
    await page.getByTestId(`agent-status-${agentId}`).filter({ hasText: 'ACTIVE' }).waitFor({ timeout: 30_000 });
  });

  it('chats with the agent end to end: encrypted and decrypted in the page, ciphertext only in the database, read receipts both ways', async () => {
    await open('Conversations', 'Conversations');
    await page.getByRole('link', { name: 'e2e-agent' }).click();
    const peer = await page.getByTestId('peer-fingerprint').textContent();
    expect(peer).toMatch(/^([0-9a-f]{4} ){7}[0-9a-f]{4}$/);
    await page.getByLabel('Your message').fill(HELLO);
    await page.getByRole('button', { name: 'Send' }).click();
    await page.locator('[data-testid="chat-message"][data-direction="out"]').filter({ hasText: HELLO }).waitFor();
    await page.locator('[data-testid="chat-message"][data-direction="in"]').filter({ hasText: `echo: ${HELLO}` }).waitFor({ timeout: 30_000 });
    // Ticks: the agent received the message and read it (it reads what its handler handled).
    const ticks = page.locator('[data-testid="chat-message"][data-direction="out"]').filter({ hasText: HELLO }).getByTestId('ticks');
    await ticks.and(page.locator('[data-status="read"]')).waitFor({ timeout: 30_000 });
    expect(await ticks.getAttribute('aria-label')).toBe('Read');
    // And the page read the agent's echo (open and visible): its history entry has a read time.
    const conversationId = new URL(page.url()).pathname.split('/').at(-1)!;
    const echo = await until('the echo read by this browser', async () => (await owner.conversationMessages(conversationId)).messages.find((m) => m.sender_device_id === agentId && m.read_at));
    expect(Date.parse(echo.read_at!)).toBeGreaterThanOrEqual(Date.parse(echo.delivered_at!));
    // The page keeps and publishes this owner device's signed and one-time prekeys (X3DH §3.2).
    const agentToken = (JSON.parse(fs.readFileSync(path.join(stateDir, 'agent.json'), 'utf8')) as { device_jwt: string }).device_jwt;
    const ownerDeviceId = (await owner.listDevices()).devices.find((d) => d.kind === 'owner')!.device_id;
    const held = await new ParleyClient({ baseUrl: t.baseUrl, deviceToken: agentToken }).prekeyCount(ownerDeviceId);
    expect(held.signed_prekey_key_id).toMatch(/^[0-9a-f]{32}$/);
    expect(held.one_time_available).toBeGreaterThan(0);
    await check('04-conversation');
    const scan = await scanForPlaintext(t.app.parley.database, [HELLO]);
    expect(scan.messageRows).toBeGreaterThanOrEqual(2);
    expect(scan.leaks).toEqual([]);
  });

  it('answers a decision before its deadline', async () => {
    const agentJwt = (JSON.parse(fs.readFileSync(path.join(stateDir, 'agent.json'), 'utf8')) as { device_jwt: string }).device_jwt;
    const asAgent = new ParleyClient({ baseUrl: t.baseUrl, deviceToken: agentJwt });
    const decision = await asAgent.createDecision({
      title: 'Deploy release 42?',
      options: [
        { option_id: 'deploy', label: 'Deploy now', risk_level: 'high' },
        { option_id: 'wait', label: 'Wait', risk_level: 'low', is_default: true },
      ],
      deadline: new Date(Date.now() + 10 * 60_000).toISOString(),
    });
    await open('Decisions', 'Decisions');
    const card = page.getByTestId(`decision-${decision.decision_id}`);
    await card.waitFor();
    expect(await card.getByRole('timer').textContent()).toMatch(/left/);
    await check('05-decisions');
    const deploy = card.getByRole('radio', { name: /Deploy now/ });
    if (await deploy.count()) await deploy.check();
    await card.getByRole('button', { name: 'Approve' }).click();
    // The owner's list holds what still awaits an answer; the audit log records the answer.
    await until('the decision to leave the inbox', async () => !(await owner.listDecisions({})).decisions.some((x) => x.decision_id === decision.decision_id));
    const events = (await owner.listAuditEvents({})).events;
    const resolved = events.find((e) => e.type === 'decision.resolved' && e.subject === decision.decision_id);
    expect(resolved, JSON.stringify(events.map((e) => e.type))).toBeTruthy();
    expect(JSON.stringify(resolved!.data)).toMatch(/approve/);
  });

  it('releases a held room message', async () => {
    const ownerDeviceId = (await owner.listDevices()).devices.find((d) => d.kind === 'owner')!.device_id;
    const room = await owner.createRoom({ name: 'ops room', member_device_ids: [agentId, ownerDeviceId], security_level: 'strict' });
    // The agent's device sends a room envelope (opaque bytes: the service never reads them); a
    // strict room holds agent-sent messages for the owner's approval (design §8.5).
    const agentJwt = (JSON.parse(fs.readFileSync(path.join(stateDir, 'agent.json'), 'utf8')) as { device_jwt: string }).device_jwt;
    const rt = new RealtimeClient({ url: t.baseUrl, token: agentJwt, WebSocket: nodeWebSocket(), reconnect: { enabled: false } });
    await rt.connect();
    const bytes = Buffer.from(crypto.getRandomValues(new Uint8Array(48))).toString('base64');
    const ack = await rt.sendRoom({ room_id: room.room_id, envelopes: [{ recipient_device_id: ownerDeviceId, header_blob: bytes, ciphertext: bytes }] });
    rt.close();
    const heldId = ack.deliveries.find((d) => d.outcome === 'held')?.held_message_id;
    expect(heldId).toBeTruthy();
    await open('Rooms', 'Rooms');
    const row = page.getByTestId(`held-${heldId}`);
    await row.waitFor();
    await check('06-rooms-held');
    await row.getByRole('button', { name: 'Approve', exact: true }).click();
    const released = await until('the held message to be released', async () => (await owner.listHeldMessages({ status: 'approved' })).find((h) => h.held_message_id === heldId));
    expect(released.status).toBe('approved');
    await row.getByTestId(`held-status-${heldId}`).filter({ hasText: 'approved' }).waitFor();
    await page.getByRole('link', { name: 'ops room' }).first().click();
    await page.getByRole('heading', { level: 1, name: 'Rooms' }).waitFor();
    await check('07-room-detail');
  });

  it('shows the agent\'s trust score and verifies the audit chain', async () => {
    await owner.recomputeTrust().catch(() => undefined);
    await page.goto(`${t.baseUrl}/trust/${agentId}`);
    await page.getByRole('heading', { level: 1, name: 'Trust' }).waitFor();
    await page.getByTestId('trust-composite').waitFor({ timeout: 30_000 });
    expect(await page.getByTestId('trust-composite').textContent()).toMatch(/\d/);
    await check('08-trust');
    await open('Audit log', 'Audit log');
    await page.getByRole('button', { name: 'Verify chain' }).click();
    await page.getByTestId('audit-verdict').filter({ hasText: /Chain intact/ }).waitFor();
    // The transparency log, checked in the page with the SDK's verifier: the signed checkpoint, then
    // an event's inclusion proof (design §8.33).
    await page.getByTestId('log-verdict').filter({ hasText: /✓ verified/ }).waitFor();
    await page.getByRole('button', { name: /Verify proof of event/ }).first().click();
    await page.getByRole('button', { name: 'Download proof' }).first().waitFor();
    await check('09-audit');
    // A second visit verifies that the log grew from the checkpoint this browser kept.
    await owner.createInvite({});
    await page.getByRole('button', { name: 'Check again' }).click();
    await page.getByTestId('log-verdict').filter({ hasText: /extends the checkpoint of \d+ events this browser verified before/ }).waitFor();
  });

  it('every other screen renders and passes axe', async () => {
    for (const [label, heading, name] of [
      ['Shadow sessions', 'Shadow sessions', '10-shadow'],
      ['Telemetry', 'Telemetry', '11-telemetry'],
      ['API keys', 'API keys', '12-api-keys'],
      ['Policies', 'Policies', '13-policies'],
      ['Marketplace', 'Marketplace', '14-marketplace'],
      ['Settings', 'Settings', '15-settings'],
    ] as const) {
      await open(label, heading);
      await page.waitForLoadState('networkidle');
      await check(name);
    }
  });

  it('an expired session goes back to sign-in and returns to the page with the draft kept', async () => {
    await open('Conversations', 'Conversations');
    await page.getByRole('link', { name: 'e2e-agent' }).click();
    await page.getByLabel('Your message').fill('half-written thought');
    // The token stops being valid (as when it expires): the next call answers 401.
    await page.evaluate(() => {
      const s = JSON.parse(sessionStorage.getItem('parley.session')!);
      s.token = s.token.slice(0, -4) + 'AAAA';
      sessionStorage.setItem('parley.session', JSON.stringify(s));
    });
    await page.reload();
    await page.getByRole('status').filter({ hasText: /session ended/ }).waitFor();
    await page.getByLabel('E-mail address').fill(EMAIL);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Conversations' }).waitFor();
    expect(await page.getByLabel('Your message').inputValue()).toBe('half-written thought');
    // The browser kept its owner device (keys sealed in IndexedDB): no second one was registered.
    expect((await owner.listDevices()).devices.filter((d) => d.kind === 'owner')).toHaveLength(1);
  });

  it('revokes the agent after a confirmation: its status changes and the agent process stops', async () => {
    await open('Agents & devices', 'Agents & devices');
    const row = page.getByTestId(`agent-${agentId}`);
    await row.getByRole('button', { name: 'Revoke' }).click();
    await row.getByRole('button', { name: 'Yes, revoke e2e-agent' }).click();
    await page.getByTestId(`agent-status-${agentId}`).filter({ hasText: 'REVOKED' }).waitFor();
    expect(await agent!.exit).toBe(0);
    expect(agent!.output()).toMatch(/revoked/);
    await check('16-agents-revoked');
    expect(audited.length).toBeGreaterThanOrEqual(16);
  });
});

/**
 * Key transparency in the owner web app, in Debian's Chromium against a malicious service (design
 * §8.39; `@parley/server/testing` key-directory fixtures). One owner, one enrolled agent
 * (`parley-agent enroll`, X3DH), one Chromium session:
 * - the service swaps the agent's identity key in its device table (the key directory untouched)
 *   before the browser's first session with it: the owner's message is refused in the chat, which
 *   names key transparency and the agent, nothing is shown as sent, and the alert of the browser's
 *   own report (`key_directory_alert`) shows above the screens, with its audit event;
 * - the service commits another key under the browser's own owner-device label: after a reload
 *   (the messenger's `start` checks its own keys) the owner sees an `unpublished_key` alert naming
 *   this browser.
 * Each state is checked with axe-core and saved as a screenshot.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { deviceKeysLabel, deviceKeysValue } from '@parley/protocol';
import { ParleyClient } from '@parley/sdk';
import { forgeKeyDirectoryEntry, startApp, swapDeviceKeys, type TestApp } from '@parley/server/testing';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIST, launch, openPage, ROOT, screenshot, seriousViolations, until } from './browser.js';

const EMAIL = `kt-owner-${Date.now()}@example.com`;
const AGENT_NAME = 'kt-agent';
const hex32 = () => randomBytes(32).toString('hex');

describe('key transparency in the owner web app (Chromium)', () => {
  let t: TestApp;
  let browser: Browser;
  let page: Page;
  let owner: ParleyClient;
  let agent: { child: ChildProcess; output: () => string } | undefined;
  let stateDir: string;
  let agentId = '';
  const pageLog: string[] = [];

  async function check(name: string) {
    await screenshot(page, name);
    const problems = await seriousViolations(page);
    expect(problems, `${name}: ${JSON.stringify(problems, null, 1)}`).toEqual([]);
  }

  beforeAll(async () => {
    if (!fs.existsSync(path.join(DIST, 'index.html'))) throw new Error('the web app is not built: run "npm run build -w @parley/dashboard" (npm ci does it)');
    t = await startApp({ listen: true, env: { DASHBOARD_DIR: DIST } });
    owner = new ParleyClient({ baseUrl: t.baseUrl, ownerToken: await t.ownerToken(EMAIL) });
    stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-e2e-kt-'));
    browser = await launch();
    ({ page } = await openPage(browser, pageLog));
  });

  afterAll(async () => {
    if (process.env.E2E_DEBUG) console.log(pageLog.join('\n'), '\n--- agent ---\n', agent?.output());
    if (agent && agent.child.exitCode === null) agent.child.kill('SIGKILL');
    await browser?.close();
    await t?.close();
    if (stateDir) fs.rmSync(stateDir, { recursive: true, force: true });
  });

  it('the owner signs in and an agent is enrolled and approved', async () => {
    await page.goto(`${t.baseUrl}/`);
    await page.getByLabel('E-mail address').fill(EMAIL);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Agents & devices' }).waitFor();
    const invite = await owner.createInvite({});
    const script = path.join(ROOT, 'packages/sdk/src/node/agent-cli.ts');
    const args = ['enroll', '--invite', invite.token, '--server', t.baseUrl, '--state-dir', stateDir, '--insecure-plain-store', '--name', AGENT_NAME, '--no-plugin', '--no-mls'];
    const child = spawn(process.execPath, ['--conditions=parley-source', '--import', 'tsx', script, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout!.on('data', (d) => (out += String(d)));
    child.stderr!.on('data', (d) => (out += String(d)));
    agent = { child, output: () => out };
    // The device_pending event brings the card without a reload.
    const card = page.locator('[data-testid^="pending-"]').filter({ hasText: AGENT_NAME });
    await card.waitFor({ timeout: 60_000 });
    agentId = (await card.getAttribute('data-testid'))!.replace('pending-', '');
    await card.getByRole('button', { name: `Approve ${AGENT_NAME}` }).click();
    await page.getByTestId(`agent-status-${agentId}`).filter({ hasText: 'ACTIVE' }).waitFor({ timeout: 60_000 });
  });

  it("refuses the agent's swapped identity key: the chat names key transparency and the agent, nothing is sent, the owners are alerted", async () => {
    // The malicious service serves another identity key for the agent before the browser's first session with it.
    await swapDeviceKeys(t, agentId, { identity_public_key: hex32() });
    await page.getByRole('navigation', { name: 'Screens' }).getByRole('link', { name: 'Conversations', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Conversations' }).waitFor();
    await page.getByRole('link', { name: AGENT_NAME }).click();
    await page.getByLabel('Your message').fill('to a forged key');
    await page.getByRole('button', { name: 'Send' }).click();

    const refusal = page.getByTestId('key-transparency-refusal');
    await refusal.waitFor({ timeout: 30_000 });
    expect(await refusal.getAttribute('role')).toBe('alert');
    expect(await refusal.getAttribute('data-peer')).toBe(agentId);
    const text = (await refusal.textContent())!;
    expect(text).toMatch(new RegExp(`^Key transparency refused the keys of ${AGENT_NAME} \\(device ${agentId.slice(0, 8)}…\\)`));
    expect(text).toContain(`key transparency: the key served for ${deviceKeysLabel(agentId)}`);
    // Not shown as sent; the text stays in the composer.
    expect(await page.getByTestId('chat-message').count()).toBe(0);
    expect(await page.getByLabel('Your message').inputValue()).toBe('to a forged key');
    // Not a generic warning either.
    expect(await page.locator('p.notice').count()).toBe(0);

    // The browser's report comes back as the owners' alert, and is in the audit log.
    const ownerDeviceId = (await owner.listDevices()).devices.find((d) => d.kind === 'owner')!.device_id;
    const alert = page.locator(`[data-testid="key-alert"][data-reason="verification_failed"][data-label="${deviceKeysLabel(agentId)}"]`);
    await alert.waitFor({ timeout: 30_000 });
    expect(await alert.textContent()).toMatch(new RegExp(`^${AGENT_NAME}'s identity keys: Chromium \\(web app\\) refused a key whose proof failed \\(`));
    const audit = await owner.listAuditEvents({ type: 'key_directory.alert' });
    expect(audit.events.map((e) => [e.subject, (e.data as { reason: string; device_id: string }).reason, (e.data as { device_id: string }).device_id])).toContainEqual([deviceKeysLabel(agentId), 'verification_failed', ownerDeviceId]);
    await check('kt-01-refused-send');
  });

  it('after the service commits a key in the browser’s own name, a reload shows the unpublished-key alert', async () => {
    const ownerDeviceId = (await owner.listDevices()).devices.find((d) => d.kind === 'owner')!.device_id;
    await forgeKeyDirectoryEntry(t, deviceKeysLabel(ownerDeviceId), deviceKeysValue({ identity_public_key: hex32(), ephemeral_public_key: hex32() }));
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Conversations' }).waitFor();
    const alert = page.locator(`[data-testid="key-alert"][data-reason="unpublished_key"][data-label="${deviceKeysLabel(ownerDeviceId)}"]`);
    await alert.waitFor({ timeout: 30_000 });
    expect(await alert.textContent()).toMatch(/^Chromium \(web app\)'s identity keys: Chromium \(web app\) found a key it did not publish \(/);
    // The earlier refusal is still listed (from the audit log), and the banner says how many.
    await page.locator(`[data-testid="key-alert"][data-label="${deviceKeysLabel(agentId)}"]`).waitFor();
    expect(await page.getByTestId('key-alerts').getByRole('heading', { name: '2 key transparency alerts' }).count()).toBe(1);
    await until('the unpublished_key audit event', async () =>
      (await owner.listAuditEvents({ type: 'key_directory.alert' })).events.some((e) => e.subject === deviceKeysLabel(ownerDeviceId) && (e.data as { reason: string }).reason === 'unpublished_key'),
    );
    await check('kt-02-unpublished-key');
  });
});

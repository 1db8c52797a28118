/**
 * The renter's side of the marketplace in a real browser: Debian's Chromium (playwright-core)
 * against a real server (embedded local payment processor) serving the built app. Tenant A is set
 * up over the API: an owner, an agent enrolled with the SDK and running in this process (it answers
 * rental-room messages), its hub identity certified by a platform operator's tier grant, a
 * capability with an SLA, a published listing. Tenant B signs in in the browser, finds the listing
 * by search (the agent's profile and SLA), rents it (a declined test card's 402 shown plainly, an
 * asynchronous one pending then active, then the Visa test card), talks to the agent in the rental
 * room (encrypted and decrypted in the page: the database holds ciphertext only), and files a
 * dispute it then sees open. Every screen passes axe-core and is saved as a screenshot.
 */
import fs from 'node:fs';
import path from 'node:path';
import { activate, DeviceIdentity, enroll, frameTap, MemorySessionStore, openRentalRooms, ParleyClient, realtimeRentalTransport, RealtimeClient, SecureMessenger, type RoomMessenger } from '@parley/sdk';
import { nodeWebSocket } from '@parley/sdk/node';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scanForPlaintext } from '../../../demo/db-scan.js';
import { newOwner, type Owner, startApp, type TestApp, certifyAgent, operatorAuth, publishedListing } from '@parley/server/testing';
import { DIST, launch, openPage, screenshot, seriousViolations, until } from './browser.js';

const RUN = Date.now().toString(36);
const RENTER_EMAIL = `renter-${RUN}@example.com`;
const TITLE = `Marmalade research desk ${RUN}`;
const QUESTION = `which quince is ripest ${RUN}?`;


/** Tenant A's agent as an SDK client in this process: it answers every rental-room text with "echo: <text>". */
async function startRentedAgent(t: TestApp, dev: Owner) {
  const owner = new ParleyClient({ baseUrl: t.baseUrl, ownerToken: dev.token });
  owner.setTenantId(dev.tenantId);
  const keys = DeviceIdentity.generate();
  const client = new ParleyClient({ baseUrl: t.baseUrl });
  const enrolled = await enroll(client, (await owner.createInvite()).token, { identityPublicKey: keys.identityPublicKeyHex, ephemeralPublicKey: keys.ephemeralPublicKeyHex, sign: (m) => keys.sign(m), name: 'rented-agent' });
  await owner.approveDevice(enrolled.device_id);
  client.setDeviceToken((await activate(client, enrolled.device_id, (m) => keys.sign(m))).device_jwt);
  const store = new MemorySessionStore();
  const messenger = await SecureMessenger.open({ identity: keys.withDeviceId(enrolled.device_id), store, client, mls: false });
  const tap = frameTap(nodeWebSocket());
  const rt = new RealtimeClient({ url: t.baseUrl, token: () => client.currentDeviceToken(), WebSocket: tap.WebSocket });
  messenger.attach(rt);
  const rooms: RoomMessenger = await openRentalRooms({ messenger, store, client, realtime: rt, transport: realtimeRentalTransport(rt, tap) });
  const heard: string[] = [];
  const problems: string[] = [];
  messenger.on('error', (e) => void problems.push(e.message));
  rooms.on('error', (e) => void problems.push(e.message));
  messenger.on('message', (m) => {
    if (m.rental_id === undefined || m.content?.type !== 'text') return;
    const text = String((m.content.payload as { text: string }).text);
    heard.push(text);
    void rooms.sendText(m.rental_id, `echo: ${text}`).catch((e: Error) => problems.push(e.message));
  });
  await messenger.start();
  await rt.connect();
  return {
    deviceId: enrolled.device_id,
    heard,
    problems,
    async stop() {
      rt.close();
      await rooms.close();
      await messenger.close();
    },
  };
}

describe('the marketplace, renter side, in Chromium', () => {
  let t: TestApp;
  let browser: Browser;
  let page: Page;
  let agent: Awaited<ReturnType<typeof startRentedAgent>> | undefined;
  let address = '';
  let listingId = '';
  const pageLog: string[] = [];

  async function check(name: string) {
    await screenshot(page, name);
    const problems = await seriousViolations(page);
    expect(problems, `${name}: ${JSON.stringify(problems, null, 1)}`).toEqual([]);
  }

  beforeAll(async () => {
    if (!fs.existsSync(path.join(DIST, 'index.html'))) throw new Error('the web app is not built: run "npm run build -w @parley/dashboard" (npm ci does it)');
    // A slower asynchronous confirmation, so that the page shows the pending rental before it turns active.
    t = await startApp({ listen: true, env: { DASHBOARD_DIR: DIST, RATE_LIMIT_ENROLL_PER_10MIN: '1000', LOCAL_PROCESSOR_DELAY_MS: '1500' } });
    const dev = await newOwner(t, 'Tenant A');
    agent = await startRentedAgent(t, dev);
    const identity = await certifyAgent(t, await operatorAuth(t), dev, agent.deviceId);
    address = identity.address;
    const cap = await t.request({
      method: 'POST',
      url: `/api/v1/hub/${address}/capabilities`,
      headers: dev.auth,
      payload: { name: 'research', version: '1.2.0', description: 'finds and reads sources', input_schema: { type: 'object', properties: { topic: { type: 'string' } } }, sla: { latency_p95_ms: 1500, uptime_sla: 0.995 } },
    });
    expect(cap.status, JSON.stringify(cap.body)).toBe(201);
    listingId = await publishedListing(t, { owner: dev, address }, { title: TITLE, sla: { latency_p95_ms: 2000, uptime_sla: 0.99 } });
    browser = await launch();
    ({ page } = await openPage(browser, pageLog));
  });

  afterAll(async () => {
    if (process.env.E2E_DEBUG) console.log(pageLog.join('\n'), '\n--- agent ---\n', agent?.problems.join('\n'));
    await agent?.stop();
    await browser?.close();
    await t?.close();
  });

  it('tenant B signs in and finds the listing by search, with the agent’s profile, trust and SLA', async () => {
    await page.goto(`${t.baseUrl}/marketplace`);
    await page.getByLabel('E-mail address').fill(RENTER_EMAIL);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Marketplace' }).waitFor();
    await page.getByRole('link', { name: 'Find an agent to rent' }).click();
    await page.getByRole('heading', { level: 1, name: 'Rent an agent' }).waitFor();
    await page.getByLabel('Search', { exact: true }).fill(`marmalade ${RUN}`);
    await page.getByLabel('Minimum trust tier').selectOption('certified');
    await page.getByRole('button', { name: 'Search listings' }).click();
    const card = page.getByTestId(`listing-${listingId}`);
    await card.waitFor();
    expect(await page.locator('[data-testid^="listing-"]').count()).toBe(1);
    expect(await card.textContent()).toContain('$25.00 per hour');
    await card.getByRole('button', { name: 'About the agent' }).click();
    const profile = card.getByTestId(`profile-${address}`);
    await profile.getByText('Research agent').waitFor();
    // The capabilities' SLA arrives with its own request, after the profile.
    await profile.getByText('research 1.2.0 (unverified): p95 latency 1.5 s · uptime 99.5 %').waitFor();
    const text = (await profile.textContent())!;
    expect(text).toMatch(/certified/);
    expect(text).toMatch(/granted by a platform operator/);
    expect(text).toContain('research 1.2.0 (unverified): p95 latency 1.5 s · uptime 99.5 %');
    expect(text).toContain('p95 latency 2 s · uptime 99 %');
    await check('market-01-browse');
  });

  it('rents it: a declined card answers the 402 plainly, an asynchronous one is pending then active, the Visa test card is active at once', async () => {
    const card = page.getByTestId(`listing-${listingId}`);
    await card.getByRole('button', { name: 'Rent', exact: true }).click();
    const dialog = card.getByRole('group', { name: `Rent ${TITLE}` });
    const pay = dialog.getByRole('button', { name: 'Rent for $25.00 per hour' });

    await dialog.getByRole('radio', { name: /declined/ }).check();
    await pay.click();
    await dialog.getByRole('alert').filter({ hasText: 'payment declined: Your card was declined. (402)' }).waitFor();
    await check('market-02-declined');

    await dialog.getByRole('radio', { name: /pending first/ }).check();
    await pay.click();
    const pending = dialog.getByTestId('rent-result');
    await pending.getByText('pending', { exact: true }).waitFor();
    const asyncRental = (await pending.getAttribute('data-rental-id'))!;
    expect(await pending.textContent()).toContain('Waiting for the payment processor');
    // No reload: the processor's confirmation reaches the page (rental_updated on the owner socket).
    await pending.getByText('active', { exact: true }).waitFor({ timeout: 15_000 });

    await dialog.getByRole('radio', { name: /succeeds at once/ }).check();
    await pay.click();
    await dialog.getByRole('alert').waitFor({ state: 'detached' });
    const visa = dialog.locator(`[data-testid="rent-result"]:not([data-rental-id="${asyncRental}"])`);
    await visa.getByText('active', { exact: true }).waitFor();
    expect(await visa.textContent()).toContain('$50.00 charged');
    await check('market-03-rented');
  });

  it('talks to the agent in the rental room: encrypted in the page, the agent’s reply decrypted in the page, ciphertext only in the database', async () => {
    await page.getByRole('link', { name: 'Open the rental room' }).click();
    await page.getByRole('heading', { level: 1, name: 'Rental' }).waitFor();
    await page.getByRole('heading', { name: `Talk to ${address}` }).waitFor();
    await until('the agent’s fingerprint', async () => /^([0-9a-f]{4} ){7}[0-9a-f]{4}$/.test((await page.getByTestId('rental-agent-fingerprint').textContent()) ?? ''));
    await page.getByLabel('Your message').fill(QUESTION);
    await page.getByRole('button', { name: 'Send' }).click();
    await page.locator('[data-testid="chat-message"][data-direction="out"]').filter({ hasText: QUESTION }).waitFor();
    await page.locator('[data-testid="chat-message"][data-direction="in"]').filter({ hasText: `echo: ${QUESTION}` }).waitFor({ timeout: 30_000 });
    expect(agent!.heard).toEqual([QUESTION]);
    expect(agent!.problems).toEqual([]);
    const scan = await scanForPlaintext(t.app.parley.database, [QUESTION, 'quince']);
    expect(scan.columns.some((c) => c.endsWith('marketplace_rental_messages.ciphertext'))).toBe(true);
    expect(scan.leaks).toEqual([]);
    await check('market-04-rental-room');
  });

  it('files a dispute with evidence and a note, and sees it open', async () => {
    const renter = new ParleyClient({ baseUrl: t.baseUrl, ownerToken: await t.ownerToken(RENTER_EMAIL) });
    const rentalId = new URL(page.url()).pathname.split('/').at(-1)!;
    const created = (await renter.listAuditEvents({ limit: 200 })).events.find((e) => e.type === 'rental.created' && e.subject === rentalId);
    expect(created).toBeTruthy();
    const form = page.getByRole('form', { name: 'File a dispute' });
    await form.getByLabel('Reason').fill('The answers came after the promised p95 latency');
    await form.getByLabel('Evidence (optional)').fill(created!.event_id);
    await form.getByLabel('Note for the reviewer (optional)').fill('Three answers took over a minute');
    await form.getByRole('button', { name: 'File dispute' }).click();
    const item = page.getByTestId('rental-disputes').getByRole('listitem').first();
    await item.getByText('open', { exact: true }).waitFor();
    // The note is its own request, sent once the dispute exists.
    await item.getByText('Three answers took over a minute').waitFor();
    const shown = (await item.textContent())!;
    expect(shown).toContain('The answers came after the promised p95 latency');
    expect(shown).toContain(`audit event ${created!.event_id}`);
    expect(shown).toContain('Three answers took over a minute');
    await form.waitFor({ state: 'detached' });
    const disputes = (await renter.listDisputes({})).disputes.filter((d) => d.rental_id === rentalId);
    expect(disputes).toHaveLength(1);
    expect(disputes[0]).toMatchObject({ status: 'open', evidence_refs: [{ type: 'audit_event', id: created!.event_id }] });
    expect((await renter.getRental(rentalId)).status).toBe('disputed');
    await check('market-05-dispute-open');
  });
});

/**
 * "Notify me on this browser" and the push service worker in Chromium (design §8.36 "Push
 * delivery"; lib/web-push.ts, public/push-sw.js) against a real server (PGlite; PostgreSQL in CI)
 * serving the built app. The switch without notification permission shows why it cannot turn on;
 * with the permission it registers the worker (which then controls the page) and subscribes with
 * the browser's own PushManager, which headless Chromium refuses here (incognito contexts never
 * subscribe; a persistent profile waits on Google's push service, out of reach of CI machines):
 * the owner is told why. The rest of the switch (the subscription registered as a `web` push
 * token of this owner device with the service's VAPID key, removed when turned off) then runs with
 * a stand-in for the push service's answer: the PushManager of the page hands out a subscription
 * as the push service would. The worker's
 * handlers run in the browser: pushes shaped as the server sends them (modules/push/payload.ts)
 * are delivered through the DevTools protocol (`ServiceWorker.deliverPushMessage`, a trusted
 * `push` event), the notifications shown are read back, and a `notificationclick` dispatched in
 * the worker navigates the open page to the push's screen.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ParleyClient } from '@parley/sdk';
import type { Browser, BrowserContext, Page, Worker } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '@parley/server/testing';
import { DIST, launch, screenshot, until } from './browser.js';

const EMAIL = `push-owner-${Date.now()}@example.com`;

/** A notification as `ServiceWorkerRegistration.getNotifications()` lists it, reduced to what the worker sets. */
interface Shown {
  title: string;
  body: string;
  tag: string;
  data: unknown;
}

/** What the stand-in PushManager recorded (see `standInPushManager`). */
interface StandIn {
  subscribed: { userVisibleOnly: boolean; key: number[] } | null;
  unsubscribed: number;
}

/**
 * Page script: a PushManager whose subscription comes from a stand-in of the push service (the
 * endpoint a push service would hand out, fresh P-256 and auth keys), recording what the app asked
 * for in `window.__pushStandIn`.
 */
function standInPushManager(endpoint: string): void {
  const state: StandIn & { sub: PushSubscription | null } = { subscribed: null, unsubscribed: 0, sub: null };
  (window as unknown as { __pushStandIn: typeof state }).__pushStandIn = state;
  const b64url = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  PushManager.prototype.getSubscription = async () => state.sub;
  PushManager.prototype.subscribe = async (options?: PushSubscriptionOptionsInit) => {
    const key = options?.applicationServerKey;
    const bytes = key instanceof ArrayBuffer ? new Uint8Array(key) : ArrayBuffer.isView(key) ? new Uint8Array(key.buffer, key.byteOffset, key.byteLength) : new Uint8Array();
    state.subscribed = { userVisibleOnly: options?.userVisibleOnly === true, key: [...bytes] };
    const pair = (await crypto.subtle.generateKey({ name: 'ECDH', namedCurve: 'P-256' }, true, ['deriveBits'])) as CryptoKeyPair;
    const json = {
      endpoint,
      expirationTime: null,
      keys: { p256dh: b64url(new Uint8Array(await crypto.subtle.exportKey('raw', pair.publicKey))), auth: b64url(crypto.getRandomValues(new Uint8Array(16))) },
    };
    state.sub = {
      endpoint,
      toJSON: () => json,
      unsubscribe: async () => {
        state.sub = null;
        state.unsubscribed += 1;
        return true;
      },
    } as unknown as PushSubscription;
    return state.sub;
  };
}

describe('push notifications in Chromium', () => {
  let t: TestApp;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let owner: ParleyClient;
  let deviceId = '';
  const pageLog: string[] = [];

  const toggle = () => page.getByRole('region', { name: 'This browser' }).getByRole('checkbox', { name: 'Notify me on this browser' });
  const alert = () => page.getByRole('region', { name: 'This browser' }).getByRole('alert');
  const registrations = async () => (await owner.listPushRegistrations()).registrations.map((r) => ({ device_id: r.device_id, platform: r.platform, push_token_id: r.push_token_id }));
  const storedId = () => page.evaluate((id) => localStorage.getItem(`parley.push.${id}`), deviceId);
  /** The notifications this origin's worker shows, by tag. */
  const shown = () =>
    page.evaluate(async () => {
      const reg = await navigator.serviceWorker.getRegistration('/');
      const list = reg ? await reg.getNotifications() : [];
      return list.map((n): Shown => ({ title: n.title, body: n.body, tag: n.tag, data: n.data as unknown })).sort((a, b) => a.tag.localeCompare(b.tag));
    });

  async function openSettings() {
    await page.getByRole('navigation', { name: 'Screens' }).getByRole('link', { name: 'Settings', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Settings' }).waitFor();
    await toggle().and(page.locator(':enabled')).waitFor();
  }

  beforeAll(async () => {
    if (!fs.existsSync(path.join(DIST, 'push-sw.js'))) throw new Error('the web app is not built (or built without its push worker): run "npm run build -w @parley/dashboard"');
    t = await startApp({ listen: true, env: { DASHBOARD_DIR: DIST } });
    owner = new ParleyClient({ baseUrl: t.baseUrl, ownerToken: await t.ownerToken(EMAIL) });
    browser = await launch();
    // The page's own Content-Security-Policy applies (no bypass): it must allow the worker's script.
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    page.on('console', (m) => pageLog.push(`[${m.type()}] ${m.text()}`));
    page.on('pageerror', (e) => pageLog.push(`[pageerror] ${e.stack ?? e.message}`));
    context.on('serviceworker', (w) => {
      pageLog.push(`[worker] ${w.url()} started`);
      w.on('console', (m) => pageLog.push(`[worker ${m.type()}] ${m.text()}`));
      w.on('close', () => pageLog.push(`[worker] ${w.url()} closed`));
    });
  });

  afterAll(async () => {
    if (process.env.E2E_DEBUG) console.log(pageLog.join('\n'));
    await browser?.close();
    await t?.close();
  });

  it('signs in; without notification permission the switch stays off and says why', async () => {
    await page.goto(`${t.baseUrl}/`);
    await page.getByLabel('E-mail address').fill(EMAIL);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Agents & devices' }).waitFor();
    deviceId = (await owner.listDevices()).devices.find((d) => d.kind === 'owner')!.device_id;
    await openSettings();
    expect(await toggle().isChecked()).toBe(false);
    await toggle().click();
    await alert().filter({ hasText: 'Notifications are blocked for this site: allow them in the browser settings first.' }).waitFor();
    expect(await toggle().isChecked()).toBe(false);
    expect(await registrations()).toEqual([]);
  });

  it('with permission, turning it on registers the worker, which controls the page; Chromium refuses the subscription and the owner is told why', async () => {
    await context.grantPermissions(['notifications'], { origin: t.baseUrl });
    await toggle().click();
    // The new attempt clears the previous error.
    await alert().filter({ hasText: 'Notifications are blocked' }).waitFor({ state: 'detached' });
    // Chromium refuses Push in incognito contexts (what `browser.newContext()` makes) at once, with
    // the words of a denied permission (crbug.com/41124656). In a persistent profile it asks its
    // push service (FCM), which the closed network of CI machines does not reach: subscribe()
    // then gives no answer (none within a minute). So no real subscription is made here; the next
    // test stands in for the push service.
    await alert().filter({ hasText: 'This browser refused a push subscription (Registration failed - permission denied). Private and incognito windows cannot receive push notifications' }).waitFor();
    expect(await toggle().isChecked()).toBe(false);
    expect(await toggle().isEnabled()).toBe(true);
    expect(await registrations()).toEqual([]);
    expect(await storedId()).toBeNull();
    const worker = await page.evaluate(async () => (await navigator.serviceWorker.getRegistration('/'))?.active?.scriptURL);
    expect(worker).toBe(`${t.baseUrl}/push-sw.js`);
    // A notification click can only navigate a window the worker controls (WindowClient.navigate).
    expect(await until('the worker to control the page', () => page.evaluate(() => navigator.serviceWorker.controller?.scriptURL))).toBe(`${t.baseUrl}/push-sw.js`);
    await screenshot(page, 'push-01-switch-refused');
  });

  it('registers the subscription as a web push token of this owner device with the service key, and removes it when turned off', async () => {
    const endpoint = `https://push.example.net/send/${randomUUID()}`;
    await context.addInitScript(standInPushManager, endpoint);
    await page.reload();
    await toggle().and(page.locator(':enabled')).waitFor();
    expect(await toggle().isChecked()).toBe(false);
    await toggle().click();
    await toggle().and(page.locator(':checked')).waitFor();
    const standIn = await page.evaluate(() => (window as unknown as { __pushStandIn: StandIn }).__pushStandIn);
    const { public_key } = await owner.vapidPublicKey();
    expect(standIn.subscribed).toEqual({ userVisibleOnly: true, key: [...Buffer.from(public_key, 'base64url')] });
    const listed = await registrations();
    expect(listed).toEqual([{ device_id: deviceId, platform: 'web', push_token_id: expect.stringMatching(/^[0-9a-f-]{36}$/) }]);
    expect(await storedId()).toBe(listed[0]!.push_token_id);
    await expect(alert().count()).resolves.toBe(0);
    await screenshot(page, 'push-02-switch-on');

    await toggle().click();
    await until('the switch to turn off', async () => !(await toggle().isChecked()) && (await toggle().isEnabled()));
    expect(await registrations()).toEqual([]);
    expect(await storedId()).toBeNull();
    expect(await page.evaluate(() => (window as unknown as { __pushStandIn: StandIn }).__pushStandIn.unsubscribed)).toBe(1);
  });

  it('the worker shows one metadata-only notification per kind for the server\'s pushes, and a click opens its screen', async () => {
    const cdp = await context.newCDPSession(page);
    const workers = new Map<string, { scopeURL: string; isDeleted: boolean }>();
    cdp.on('ServiceWorker.workerRegistrationUpdated', (e) => e.registrations.forEach((r) => workers.set(r.registrationId, r)));
    cdp.on('ServiceWorker.workerVersionUpdated', (e) => e.versions.forEach((v) => pageLog.push(`[worker version] ${v.versionId} ${v.runningStatus} ${v.status}`)));
    cdp.on('ServiceWorker.workerErrorReported', (e) => pageLog.push(`[worker error] ${e.errorMessage.errorMessage}`));
    await cdp.send('ServiceWorker.enable');
    const registrationId = await until('the push worker in DevTools', () => [...workers].find(([, r]) => r.scopeURL === `${t.baseUrl}/` && !r.isDeleted)?.[0]);
    // The worker reads the kind, ids, count and sender of a push, not its tenant.
    const tenant = randomUUID();
    const conversation = randomUUID();
    const room = randomUUID();
    /**
     * Deliver a push with `payload` (the plaintext the server encrypts, payload.ts) and wait until
     * the notifications satisfy `ready`. DevTools answers before the worker handles the push and
     * says nothing when a delivery is lost (rare, on a loaded machine), so a push
     * whose notification does not appear within 10 s is delivered again, at most three times (the
     * same push shows the same notification, under the same tag).
     */
    async function push(payload: Record<string, unknown>, ready: (list: Shown[]) => boolean): Promise<Shown[]> {
      const data = JSON.stringify({ tenant_id: tenant, device_id: deviceId, ...payload });
      for (let attempt = 1; ; attempt++) {
        pageLog.push(`[push] ${data} to registration ${registrationId} (attempt ${attempt})`);
        await cdp.send('ServiceWorker.deliverPushMessage', { origin: t.baseUrl, registrationId, data });
        try {
          return await until(
            `the notification of ${data}`,
            async () => {
              const list = await shown();
              return ready(list) && list;
            },
            10_000,
          );
        } catch (err) {
          if (attempt === 3) throw err;
        }
      }
    }

    const message = { title: 'New message', body: 'From Build agent', tag: 'message', data: { url: `/conversations/${conversation}` } };
    expect(await push({ event: 'message', conversation_id: conversation, count: 1, sender_name: 'Build agent' }, (l) => l.length === 1)).toEqual([message]);
    const decisions = { title: '2 new decisions', body: 'Open Parley to read it.', tag: 'decision_request', data: { url: '/decisions' } };
    expect(await push({ event: 'decision_request', decision_id: randomUUID(), count: 2 }, (l) => l.length === 2)).toEqual([decisions, message]);
    // A newer push of a kind replaces that kind's notification.
    const messages = { ...message, title: '3 new messages' };
    expect(await push({ event: 'message', conversation_id: conversation, count: 3, sender_name: 'Build agent' }, (l) => l.some((n) => n.title === '3 new messages'))).toEqual([decisions, messages]);
    const held = { title: 'A message was held for your review', body: 'Open Parley to read it.', tag: 'held_message', data: { url: `/rooms/${room}` } };
    expect(await push({ event: 'held_message', held_message_id: randomUUID(), room_id: room, count: 1 }, (l) => l.length === 3)).toEqual([decisions, held, messages]);
    await cdp.detach();

    // A click on a notification (dispatched in the worker: headless Chromium has no notification
    // to click; the worker may navigate the page it controls, though not focus it without a click).
    const sw = await until('the push worker', () => context.serviceWorkers().findLast((w) => w.url() === `${t.baseUrl}/push-sw.js`));
    const click = (w: Worker, tag: string) =>
      w.evaluate(async (which) => {
        const g = self as unknown as { registration: ServiceWorkerRegistration; dispatchEvent(e: Event): boolean; NotificationEvent: new (type: string, init: { notification: Notification }) => Event };
        const [n] = await g.registration.getNotifications({ tag: which });
        if (!n) throw new Error(`no notification tagged ${which}`);
        g.dispatchEvent(new g.NotificationEvent('notificationclick', { notification: n }));
      }, tag);
    await click(sw, 'decision_request');
    await page.waitForURL(`${t.baseUrl}/decisions`);
    await page.getByRole('heading', { level: 1, name: 'Decisions' }).waitFor();
    // The clicked notification is closed; the others stay.
    expect((await until('the clicked notification to close', async () => (await shown()).length === 2 && shown())).map((n) => n.tag)).toEqual(['held_message', 'message']);
    await click(sw, 'held_message');
    await page.waitForURL(`${t.baseUrl}/rooms/${room}`);
    await page.getByRole('heading', { level: 1, name: 'Rooms' }).waitFor();
    await screenshot(page, 'push-03-opened-from-notification');
  });
});

/**
 * "Notify me on this browser" (lib/web-push.ts, public/push-sw.js; design §8.36): the
 * subscription flow against stand-ins of the browser's Push API and of the service's REST answers,
 * and the service worker's notifications for metadata-only pushes.
 */
import fs from 'node:fs';
import path from 'node:path';
import vm from 'node:vm';
import { describe, expect, it } from 'vitest';
import { disablePush, enablePush, isSubscribed, pushSupported, type PushApi, type PushBrowser, type PushIdStore } from '../src/lib/web-push';

const DEVICE = '11111111-1111-4111-8111-111111111111';
const KEY = new Uint8Array(65).map((_, i) => (i === 0 ? 4 : i));
const KEY_B64URL = btoa(String.fromCharCode(...KEY)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');

/** A browser whose push manager subscribes once and remembers it. */
function fakeBrowser(permission: NotificationPermission = 'granted') {
  const calls: string[] = [];
  let sub: { toJSON(): unknown; unsubscribe(): Promise<boolean> } | null = null;
  let keyUsed: Uint8Array | undefined;
  let registered = false;
  const reg = {
    pushManager: {
      getSubscription: async () => sub,
      subscribe: async (o: { userVisibleOnly: boolean; applicationServerKey: Uint8Array }) => {
        calls.push(`subscribe:${o.userVisibleOnly}`);
        keyUsed = o.applicationServerKey;
        sub = {
          toJSON: () => ({ endpoint: 'https://push.example.net/abc', keys: { p256dh: 'p', auth: 'a' } }),
          unsubscribe: async () => {
            calls.push('unsubscribe');
            sub = null;
            return true;
          },
        };
        return sub;
      },
    },
  };
  const browser: PushBrowser = {
    register: async () => {
      registered = true;
      return reg;
    },
    existing: async () => (registered ? reg : undefined),
    requestPermission: async () => permission,
  };
  return { browser, calls, keyUsed: () => keyUsed };
}

function fakeApi(deleteStatus?: number) {
  const calls: unknown[] = [];
  const api: PushApi = {
    vapidPublicKey: async () => ({ public_key: KEY_B64URL }),
    registerPushToken: async (body) => (calls.push(body), { push_token_id: 'tok-1' }),
    deletePushRegistration: async (id) => {
      calls.push(`delete:${id}`);
      if (deleteStatus) throw Object.assign(new Error('gone'), { status: deleteStatus });
      return undefined;
    },
  };
  return { api, calls };
}

const memoryIds = (): PushIdStore & { map: Map<string, string> } => {
  const map = new Map<string, string>();
  return { map, get: (d) => map.get(d) ?? null, set: (d, id) => (id === null ? map.delete(d) : map.set(d, id)) };
};

describe('web push subscription', () => {
  it('subscribes with the service key and registers the subscription JSON for this owner device', async () => {
    const b = fakeBrowser();
    const a = fakeApi();
    const ids = memoryIds();
    expect(await isSubscribed(b.browser)).toBe(false);
    await enablePush(b.browser, a.api, ids, DEVICE);
    expect(b.calls).toEqual(['subscribe:true']);
    expect([...b.keyUsed()!]).toEqual([...KEY]);
    expect(a.calls).toEqual([{ device_id: DEVICE, platform: 'web', token: JSON.stringify({ endpoint: 'https://push.example.net/abc', keys: { p256dh: 'p', auth: 'a' } }) }]);
    expect(ids.get(DEVICE)).toBe('tok-1');
    expect(await isSubscribed(b.browser)).toBe(true);
  });

  it('refuses when notifications are blocked, before subscribing', async () => {
    const b = fakeBrowser('denied');
    const a = fakeApi();
    await expect(enablePush(b.browser, a.api, memoryIds(), DEVICE)).rejects.toThrow(/blocked/);
    expect(b.calls).toEqual([]);
    expect(a.calls).toEqual([]);
  });

  it('turning off removes the registration (a 404 means already gone) and unsubscribes', async () => {
    for (const status of [undefined, 404]) {
      const b = fakeBrowser();
      const a = fakeApi(status);
      const ids = memoryIds();
      await enablePush(b.browser, a.api, ids, DEVICE);
      await disablePush(b.browser, a.api, ids, DEVICE);
      expect(a.calls.at(-1)).toBe('delete:tok-1');
      expect(b.calls).toEqual(['subscribe:true', 'unsubscribe']);
      expect(ids.map.size).toBe(0);
      expect(await isSubscribed(b.browser)).toBe(false);
    }
    const b = fakeBrowser();
    const a = fakeApi(500);
    const ids = memoryIds();
    await enablePush(b.browser, a.api, ids, DEVICE);
    await expect(disablePush(b.browser, a.api, ids, DEVICE)).rejects.toThrow('gone');
  });

  it('says when the browser refuses the subscription (incognito), and keeps other refusals as they are', async () => {
    for (const [refusal, shown] of [
      ['Registration failed - permission denied', /^This browser refused a push subscription \(Registration failed - permission denied\)\. Private and incognito windows/],
      ['Registration failed - push service error', /^Registration failed - push service error$/],
    ] as const) {
      const b = fakeBrowser();
      const reg = await b.browser.register();
      reg.pushManager.subscribe = async () => {
        throw new DOMException(refusal, 'AbortError');
      };
      const a = fakeApi();
      const ids = memoryIds();
      await expect(enablePush(b.browser, a.api, ids, DEVICE)).rejects.toThrow(shown);
      expect(a.calls).toEqual([]);
      expect(ids.map.size).toBe(0);
    }
  });

  it('tells the owner when the push service does not answer, and registers nothing', async () => {
    const b = fakeBrowser();
    const reg = await b.browser.register();
    reg.pushManager.subscribe = () => new Promise(() => undefined);
    const a = fakeApi();
    const ids = memoryIds();
    await expect(enablePush(b.browser, a.api, ids, DEVICE, 50)).rejects.toThrow(/push service did not answer within 0 s/);
    expect(a.calls).toEqual([]);
    expect(ids.map.size).toBe(0);
  });

  it('says whether the browser supports push', () => {
    expect(pushSupported({ navigator: { serviceWorker: {} }, PushManager: {}, Notification: {} })).toBe(true);
    expect(pushSupported({ navigator: {}, PushManager: {}, Notification: {} })).toBe(false);
  });
});

describe('push service worker', () => {
  const source = fs.readFileSync(path.join(import.meta.dirname, '../public/push-sw.js'), 'utf8');

  /** Run the worker in a sandbox and deliver one push with `payload`; answers the notification shown. */
  async function deliver(payload: unknown): Promise<{ title: string; options: { body: string; tag: string; data: { url: string } } }> {
    const listeners: Record<string, (e: unknown) => void> = {};
    const shown: { title: string; options: { body: string; tag: string; data: { url: string } } }[] = [];
    const self = {
      addEventListener: (type: string, fn: (e: unknown) => void) => (listeners[type] = fn),
      registration: { showNotification: async (title: string, options: never) => void shown.push({ title, options }) },
      location: { origin: 'https://parley.example' },
    };
    vm.runInNewContext(source, { self, URL });
    let done: Promise<unknown> = Promise.resolve();
    listeners.push!({ data: { json: () => payload }, waitUntil: (p: Promise<unknown>) => (done = p) });
    await done;
    return shown[0]!;
  }

  it('names what waits from the metadata, one notification per kind, and links to its screen', async () => {
    const conv = '22222222-2222-4222-8222-222222222222';
    expect(await deliver({ event: 'message', conversation_id: conv, count: 1, sender_name: 'Build agent' })).toEqual({
      title: 'New message',
      options: { body: 'From Build agent', tag: 'message', data: { url: `/conversations/${conv}` } },
    });
    expect(await deliver({ event: 'decision_request', decision_id: conv, count: 3 })).toEqual({
      title: '3 new decisions',
      options: { body: 'Open Parley to read it.', tag: 'decision_request', data: { url: '/decisions' } },
    });
    expect((await deliver({ event: 'room_message', room_id: '../../evil', count: 1 })).options.data.url).toBe('/rooms');
    // Held messages are reviewed on the Rooms screens (all of them, or the room's own).
    expect((await deliver({ event: 'held_message', held_message_id: conv, room_id: conv, count: 1 })).options.data.url).toBe(`/rooms/${conv}`);
    expect((await deliver({ event: 'held_message', held_message_id: conv, count: 1 })).options.data.url).toBe('/rooms');
  });
});

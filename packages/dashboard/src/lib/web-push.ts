/**
 * "Notify me on this browser" (design §8.36 "Push delivery"): this browser's Web Push
 * subscription (W3C Push API) registered as a `web` push token of its owner device, so the service
 * wakes it when something waits and the app is closed. The service worker (`public/push-sw.js`)
 * shows the notification; pushes carry metadata only, never content.
 *
 * The browser APIs are passed in ({@link PushBrowser}) so the flow is testable without a browser.
 */

/** The parts of the browser this flow uses (`navigator.serviceWorker`, `Notification`). */
export interface PushBrowser {
  /** Register (or get) the push service worker's registration. */
  register(): Promise<PushRegistrationLike>;
  /** The current registration, if the worker was registered before. */
  existing(): Promise<PushRegistrationLike | undefined>;
  /** Ask the user for notification permission. */
  requestPermission(): Promise<NotificationPermission>;
}

/** A service worker registration's push manager, as far as this flow uses it. */
export interface PushRegistrationLike {
  pushManager: {
    getSubscription(): Promise<PushSubscriptionLike | null>;
    subscribe(options: { userVisibleOnly: boolean; applicationServerKey: Uint8Array }): Promise<PushSubscriptionLike>;
  };
}

/** A push subscription, as far as this flow uses it. */
export interface PushSubscriptionLike {
  toJSON(): unknown;
  unsubscribe(): Promise<boolean>;
}

/** The REST calls of the flow (the SDK's `ParleyClient` methods of these names). */
export interface PushApi {
  vapidPublicKey(): Promise<{ public_key: string }>;
  registerPushToken(body: { device_id: string; platform: 'web'; token: string }): Promise<{ push_token_id: string }>;
  deletePushRegistration(pushTokenId: string): Promise<unknown>;
}

/** Where the registration id of this browser's subscription is kept (per owner device). */
export interface PushIdStore {
  get(deviceId: string): string | null;
  set(deviceId: string, id: string | null): void;
}

/** The service worker's script and scope. */
export const PUSH_WORKER_URL = '/push-sw.js';

/** Whether this browser can receive Web Push at all (service workers, Push API, notifications). */
export function pushSupported(w: { navigator?: { serviceWorker?: unknown }; PushManager?: unknown; Notification?: unknown } = globalThis as never): boolean {
  return Boolean(w.navigator?.serviceWorker && w.PushManager && w.Notification);
}

/** The real browser (call only when {@link pushSupported}). */
export function browserPush(): PushBrowser {
  return {
    register: async () => {
      await navigator.serviceWorker.register(PUSH_WORKER_URL, { scope: '/' });
      return (await navigator.serviceWorker.ready) as unknown as PushRegistrationLike;
    },
    existing: async () => (await navigator.serviceWorker.getRegistration('/')) as unknown as PushRegistrationLike | undefined,
    requestPermission: () => Notification.requestPermission(),
  };
}

/** The registration ids in `localStorage`, one key per owner device. */
export const localPushIds = (storage: Storage = localStorage): PushIdStore => ({
  get: (deviceId) => storage.getItem(`parley.push.${deviceId}`),
  set: (deviceId, id) => (id === null ? storage.removeItem(`parley.push.${deviceId}`) : storage.setItem(`parley.push.${deviceId}`, id)),
});

/** Whether this browser has a push subscription now. */
export async function isSubscribed(browser: PushBrowser): Promise<boolean> {
  const reg = await browser.existing();
  return Boolean(reg && (await reg.pushManager.getSubscription()));
}

/**
 * A refused subscription, worded for the owner. Chromium refuses every push subscription in
 * incognito windows with "Registration failed - permission denied" even when notifications are
 * allowed (crbug.com/41124656; deliberately not detectable), so that refusal says so; other
 * refusals (such as an unreachable push service) keep the browser's words.
 * @throws always: the error to show.
 */
function explainRefusal(err: unknown): never {
  const message = err instanceof Error ? err.message : String(err);
  if (/permission denied/i.test(message)) throw new Error(`This browser refused a push subscription (${message}). Private and incognito windows cannot receive push notifications: use a normal window.`);
  throw err;
}

/** How long the browser's push service may take to answer a subscription (ms) before the owner is told. */
export const SUBSCRIBE_TIMEOUT_MS = 20_000;

/** `promise`, or a rejection naming the unreachable push service after `ms`. */
function withinTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`This browser's push service did not answer within ${Math.round(ms / 1000)} s: check the network and try again.`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/**
 * Turn notifications on: ask permission, subscribe with the service's VAPID key and register the
 * subscription JSON as a `web` push token of `deviceId`.
 * @param subscribeTimeoutMs how long the browser's push service may take to answer (default {@link SUBSCRIBE_TIMEOUT_MS}).
 * @throws Error when the user refuses notifications, the browser refuses the subscription or its push service does not answer in time; the API's errors as they come.
 */
export async function enablePush(browser: PushBrowser, api: PushApi, ids: PushIdStore, deviceId: string, subscribeTimeoutMs = SUBSCRIBE_TIMEOUT_MS): Promise<void> {
  if ((await browser.requestPermission()) !== 'granted') throw new Error('Notifications are blocked for this site: allow them in the browser settings first.');
  const reg = await browser.register();
  const { public_key } = await api.vapidPublicKey();
  const key = Uint8Array.from(atob(public_key.replace(/-/g, '+').replace(/_/g, '/')), (c) => c.charCodeAt(0));
  const sub = (await reg.pushManager.getSubscription()) ?? (await withinTimeout(reg.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: key }).catch(explainRefusal), subscribeTimeoutMs));
  const { push_token_id } = await api.registerPushToken({ device_id: deviceId, platform: 'web', token: JSON.stringify(sub.toJSON()) });
  ids.set(deviceId, push_token_id);
}

/** Turn notifications off: remove the registration (when known) and end the subscription. */
export async function disablePush(browser: PushBrowser, api: PushApi, ids: PushIdStore, deviceId: string): Promise<void> {
  const id = ids.get(deviceId);
  if (id) {
    await api.deletePushRegistration(id).catch((err: unknown) => {
      // Already gone (removed elsewhere, or by the service after the push service said so).
      if ((err as { status?: number }).status !== 404) throw err;
    });
    ids.set(deviceId, null);
  }
  const sub = await (await browser.existing())?.pushManager.getSubscription();
  await sub?.unsubscribe();
}

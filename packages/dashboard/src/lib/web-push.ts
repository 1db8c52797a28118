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
 * Turn notifications on: ask permission, subscribe with the service's VAPID key and register the
 * subscription JSON as a `web` push token of `deviceId`.
 * @throws Error when the user refuses notifications; the API's errors as they come.
 */
export async function enablePush(browser: PushBrowser, api: PushApi, ids: PushIdStore, deviceId: string): Promise<void> {
  if ((await browser.requestPermission()) !== 'granted') throw new Error('Notifications are blocked for this site: allow them in the browser settings first.');
  const reg = await browser.register();
  const { public_key } = await api.vapidPublicKey();
  const key = Uint8Array.from(atob(public_key.replace(/-/g, '+').replace(/_/g, '/')), (c) => c.charCodeAt(0));
  const sub = (await reg.pushManager.getSubscription()) ?? (await reg.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: key }));
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

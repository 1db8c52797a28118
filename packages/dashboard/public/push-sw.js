/* global self, URL */
/*
 * The web app's push service worker (design §8.36 "Push delivery"; W3C Push API and Notifications
 * API). A push carries metadata only ({event, tenant_id, device_id, conversation_id? | room_id? |
 * decision_id? | held_message_id? | rental_id?, count, sender_name?}), never content: the worker
 * shows a notification naming what waits, one per kind (`tag`: a newer push of the same kind
 * replaces the older one), and a click opens the app on the matching screen, which fetches and
 * decrypts what waits.
 */
const TEXT = {
  message: ['New message', 'messages'],
  room_message: ['New room message', 'room messages'],
  rental_message: ['New rental message', 'rental messages'],
  a2a_message: ['New A2A message', 'A2A messages'],
  decision_request: ['A decision awaits you', 'decisions'],
  approval_request: ['An A2A channel awaits approval', 'approval requests'],
  held_message: ['A message was held for your review', 'held messages'],
  enrollment_pending: ['An agent awaits approval', 'agents awaiting approval'],
  spend_alert: ['Spend alert', 'spend alerts'],
  key_alert: ['Key transparency alert', 'key transparency alerts'],
};

const SCREEN = {
  message: '/conversations',
  room_message: '/rooms',
  rental_message: '/marketplace',
  a2a_message: '/conversations',
  decision_request: '/decisions',
  approval_request: '/agents',
  held_message: '/rooms',
  enrollment_pending: '/agents',
  spend_alert: '/spend',
  key_alert: '/audit',
};

/** The app path for a push: the conversation, room or rental it names, else its kind's screen. */
function screenOf(p) {
  const id = (v) => (typeof v === 'string' && /^[0-9a-f-]{36}$/i.test(v) ? v : undefined);
  if (p.event === 'message' && id(p.conversation_id)) return `/conversations/${p.conversation_id}`;
  if (p.event === 'room_message' && id(p.room_id)) return `/rooms/${p.room_id}`;
  if (p.event === 'rental_message' && id(p.rental_id)) return `/marketplace/rentals/${p.rental_id}`;
  if (p.event === 'held_message' && id(p.room_id)) return `/rooms/${p.room_id}`;
  return SCREEN[p.event] || '/';
}

self.addEventListener('push', (event) => {
  let p;
  try {
    p = event.data ? event.data.json() : {};
  } catch {
    p = {};
  }
  const [one, many] = TEXT[p.event] || ['Something awaits you in Parley', 'events'];
  const count = Number(p.count) || 1;
  const title = count > 1 ? `${count} new ${many}` : one;
  const body = p.sender_name ? `From ${p.sender_name}` : 'Open Parley to read it.';
  event.waitUntil(self.registration.showNotification(title, { body, tag: p.event || 'parley', data: { url: screenOf(p) } }));
});

// The worker takes control of the app's open pages when it first activates (Service Workers
// `Clients.claim()`): only a controlled window can be navigated by a notification click, and the
// page that turned notifications on is open already. The worker has no fetch handler, so control
// changes nothing else.
self.addEventListener('activate', (event) => {
  event.waitUntil(self.clients.claim());
});

self.addEventListener('notificationclick', (event) => {
  event.notification.close();
  const url = new URL((event.notification.data && event.notification.data.url) || '/', self.location.origin).href;
  event.waitUntil(
    self.clients.matchAll({ type: 'window' }).then((windows) => {
      const open = windows.find((w) => w.url.startsWith(self.location.origin));
      if (open) return open.navigate(url).then((w) => (w || open).focus());
      return self.clients.openWindow(url);
    }),
  );
});

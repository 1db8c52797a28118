/**
 * The renter's helpers: the listing search form into `GET /marketplace/listings` query values
 * (integer cents), listing words (price, term, SLA, capabilities), the rental room's chat-log
 * writes and delivery outcomes, and the Stripe.js loader and Payment Element wrapper against a
 * fake Stripe.js (no network).
 */
import { MemorySessionStore, type RoomMessenger, type RoomSendReceipt } from '@parley/sdk';
import { describe, expect, it, vi } from 'vitest';
import { ChatLog } from '../src/lib/chat-log';
import { browseQuery, capabilityText, EMPTY_BROWSE, priceText, slaText, termText } from '../src/lib/market-browse';
import { joinRentalRoom, rentalChatId, sendRentalText, undelivered } from '../src/lib/rental-room';
import { loadStripeJs, mountPaymentForm, STRIPE_JS_URL, type StripeElements, type StripeHost, type StripeJs } from '../src/lib/stripe';

const RENTAL = '00000000-0000-4000-8000-0000000000a1';
const AGENT = '00000000-0000-4000-8000-0000000000b1';
const ME = '00000000-0000-4000-8000-0000000000c1';

describe('listing search form', () => {
  it('an empty form searches everything, newest first, a page at a time', () => {
    expect(browseQuery(EMPTY_BROWSE)).toEqual({ ok: true, body: { limit: 20 } });
  });

  it('every field becomes its query value; dollars become integer cents', () => {
    const r = browseQuery({ text: '  deep research ', capability: ' research ', category: 'Research', tier: 'certified', minPrice: '10', maxPrice: '$1,250.5' });
    expect(r).toEqual({ ok: true, body: { limit: 20, query: 'deep research', capability: 'research', category: 'research', tier: 'certified', min_price_cents: 1000, max_price_cents: 125050 } });
  });

  it('refuses a price that is no dollar amount, and a lowest price above the highest', () => {
    expect(browseQuery({ ...EMPTY_BROWSE, minPrice: 'ten' })).toEqual({ ok: false, error: 'Give the lowest price in US dollars, for example 12.50.' });
    expect(browseQuery({ ...EMPTY_BROWSE, maxPrice: '1.234' })).toEqual({ ok: false, error: 'Give the highest price in US dollars, for example 12.50.' });
    expect(browseQuery({ ...EMPTY_BROWSE, minPrice: '20', maxPrice: '10' })).toEqual({ ok: false, error: 'The lowest price is above the highest.' });
  });
});

describe('listing words', () => {
  it('price, term (named or the model’s default)', () => {
    expect(priceText({ model: 'per_hour', price_cents: 2500 })).toBe('$25.00 per hour');
    expect(termText({ term_hours: 2, pricing: { model: 'per_hour', price_cents: 1 } })).toBe('2 h term');
    expect(termText({ term_hours: null, pricing: { model: 'per_day', price_cents: 1 } })).toBe('default term (one day)');
    expect(termText({ pricing: { model: 'monthly', price_cents: 1 } })).toBe('default term (one month)');
    expect(termText({ pricing: { model: 'per_task', price_cents: 1 } })).toBe('default term (24 h for the task)');
  });

  it('an SLA in words, or nothing when it promises nothing', () => {
    expect(slaText({ latency_p95_ms: 1500, uptime_sla: 0.995 })).toBe('p95 latency 1.5 s · uptime 99.5 %');
    expect(slaText({ latency_p95_ms: 250 })).toBe('p95 latency 250 ms');
    expect(slaText({ uptime_sla: 0.9999 })).toBe('uptime 99.99 %');
    expect(slaText({})).toBeUndefined();
    expect(slaText(null)).toBeUndefined();
    expect(capabilityText({ name: 'research', version: '1.2.0', certification_tier: 'certified', sla: null })).toBe('research 1.2.0 (certified): no SLA promised');
  });
});

describe('rental room', () => {
  const receipt = (outcomes: string[]): RoomSendReceipt => ({
    room_id: RENTAL,
    room_message_id: '00000000-0000-4000-8000-0000000000d1',
    timestamp: '2026-03-01T12:00:00.000Z',
    client_ref: 'ref',
    recipients: outcomes.map(() => AGENT),
    deliveries: outcomes.map((outcome) => ({ recipient_device_id: AGENT, outcome: outcome as 'delivered' })),
  });

  it('joining registers the room, catches up, and answers the agent; a room without agent is refused', async () => {
    const calls: string[] = [];
    const rooms = {
      refresh: vi.fn(async () => void calls.push('refresh')),
      peers: vi.fn(() => new Map([[AGENT, rentalChatId(RENTAL, AGENT)]])),
      catchUp: vi.fn(async () => (calls.push('catchUp'), 2)),
    };
    expect(await joinRentalRoom(rooms as unknown as RoomMessenger, RENTAL)).toBe(AGENT);
    expect(calls).toEqual(['refresh', 'catchUp']);
    rooms.peers.mockReturnValue(new Map());
    await expect(joinRentalRoom(rooms as unknown as RoomMessenger, RENTAL)).rejects.toThrow(/no agent/);
  });

  it('a sent text lands in the browser’s chat log under the pairwise rental conversation, as sent', async () => {
    const chat = new ChatLog(new MemorySessionStore());
    const rooms = { sendText: vi.fn(async () => receipt(['delivered'])) };
    await sendRentalText({ chat, deviceId: ME }, rooms as unknown as RoomMessenger, RENTAL, AGENT, 'hello agent');
    expect(rooms.sendText).toHaveBeenCalledWith(RENTAL, 'hello agent');
    expect(await chat.list(`rental:${RENTAL}:${AGENT}`)).toEqual([
      {
        message_id: '00000000-0000-4000-8000-0000000000d1',
        conversation_id: `rental:${RENTAL}:${AGENT}`,
        direction: 'out',
        sender_device_id: ME,
        timestamp: '2026-03-01T12:00:00.000Z',
        message_type: 'text',
        content: { type: 'text', payload: { text: 'hello agent' } },
        status: 'sent',
      },
    ]);
  });

  it('says which copies did not go through at once', () => {
    expect(undelivered(receipt(['delivered', 'notified']))).toBeUndefined();
    expect(undelivered(receipt(['held']))).toMatch(/held for an owner’s approval/);
    expect(undelivered(receipt(['blocked']))).toBe('blocked by a policy');
  });
});

describe('Stripe.js', () => {
  /** A fake page: `document.createElement('script')` and `head.appendChild`, loading by calling back. */
  function fakeHost(onAppend: (script: { src: string; onload: () => void; onerror: () => void }, win: StripeHost['win']) => void) {
    const win: StripeHost['win'] = {};
    const appended: { src: string; async: boolean }[] = [];
    const doc = {
      createElement: () => ({ src: '', async: false, onload: () => undefined, onerror: () => undefined }),
      head: {
        appendChild: (s: { src: string; async: boolean; onload: () => void; onerror: () => void }) => {
          appended.push(s);
          queueMicrotask(() => onAppend(s, win));
          return s;
        },
      },
    } as unknown as StripeHost['doc'];
    return { host: { win, doc }, appended };
  }

  it('uses the page’s Stripe when present; otherwise adds the js.stripe.com script once; a failed load is retried', async () => {
    const factory = vi.fn();
    expect(await loadStripeJs({ win: { Stripe: factory }, doc: {} as StripeHost['doc'] })).toBe(factory);

    const failing = fakeHost((s) => s.onerror());
    await expect(loadStripeJs(failing.host)).rejects.toThrow(`Stripe.js could not be loaded from ${STRIPE_JS_URL}`);
    const working = fakeHost((s, win) => {
      win.Stripe = factory;
      s.onload();
    });
    expect(await loadStripeJs(working.host)).toBe(factory);
    expect(working.appended).toEqual([expect.objectContaining({ src: 'https://js.stripe.com/v3/', async: true })]);
  });

  /** A fake Stripe.js instance recording what the wrapper asks of it. */
  function fakeStripe(results: { submit?: { error?: { message?: string } }; made?: { paymentMethod?: { id: string }; error?: { message?: string } } }) {
    const element = { mount: vi.fn(), destroy: vi.fn() };
    const elements: StripeElements = { create: vi.fn(() => element), submit: vi.fn(async () => results.submit ?? {}) };
    const stripe: StripeJs = { elements: vi.fn(() => elements), createPaymentMethod: vi.fn(async () => results.made ?? { paymentMethod: { id: 'pm_1Fake' } }) };
    return { stripe, elements, element };
  }

  it('mounts a card Payment Element for a later off-session charge and turns its details into a PaymentMethod id', async () => {
    const f = fakeStripe({});
    const target = {} as HTMLElement;
    const form = mountPaymentForm(f.stripe, target);
    expect(f.stripe.elements).toHaveBeenCalledWith({ mode: 'setup', currency: 'usd', paymentMethodCreation: 'manual', paymentMethodTypes: ['card'] });
    expect(f.elements.create).toHaveBeenCalledWith('payment');
    expect(f.element.mount).toHaveBeenCalledWith(target);
    expect(await form.paymentMethod()).toBe('pm_1Fake');
    expect(f.elements.submit).toHaveBeenCalledBefore(f.stripe.createPaymentMethod as ReturnType<typeof vi.fn>);
    expect(f.stripe.createPaymentMethod).toHaveBeenCalledWith({ elements: f.elements });
    form.destroy();
    expect(f.element.destroy).toHaveBeenCalled();
  });

  it('reports incomplete details and Stripe’s refusals, and makes no payment method then', async () => {
    const incomplete = fakeStripe({ submit: { error: { message: 'Your card number is incomplete.' } } });
    await expect(mountPaymentForm(incomplete.stripe, {} as HTMLElement).paymentMethod()).rejects.toThrow('Your card number is incomplete.');
    expect(incomplete.stripe.createPaymentMethod).not.toHaveBeenCalled();
    const refused = fakeStripe({ made: { error: { message: 'Your card was declined.' } } });
    await expect(mountPaymentForm(refused.stripe, {} as HTMLElement).paymentMethod()).rejects.toThrow('Your card was declined.');
  });
});

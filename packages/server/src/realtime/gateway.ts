/**
 * The WebSocket gateway (contract §4.18, §6.1; design §6, §7) at `/api/v1/ws?token=…`.
 *
 * The gateway knows no module: modules plug into it (MCP's setRequestHandler pattern).
 * - Authentication is a {@link SocketAuthenticator} given by the composition root (devices module:
 *   device JWT, or owner JWT plus `device_id` naming the owner's ACTIVE device; api-keys module:
 *   API keys, possibly unregistered until `client_key_register`). Refusals accept the socket, then
 *   close it: 4401 for a 401 AppError (missing/invalid token) or any other failure, 4001 device
 *   revoked, 4003 any other AppError (not ACTIVE, not the caller's device).
 * - Every frame but `ping`/`pong` is served by a {@link FrameHandler} a module registered with
 *   {@link Gateway.registerFrame} (conversations: `message`, `typing`; api-keys:
 *   `client_key_register`; rooms: `room_message`; A2A: `a2a_*`). The gateway validates, rate
 *   limits (60/min per device, a budget the REST sends share: lib/message-rate.ts), orders per
 *   socket and answers acks and error frames.
 * - Bus frames are written to the local sockets of their audience; {@link Gateway.onDeliver} hooks
 *   see each delivery (conversations: `message_receipts` rows; receipts: `room_receipt_batches`
 *   rows of room envelopes — the delivered receipts).
 * - When the bus reports a gap (it lost and regained its transport, so events of other instances
 *   may be missing), every socket is closed with 1012 (service restart): clients reconnect and
 *   catch up by cursor (docs/operations.md "Faults").
 * - Graceful shutdown ({@link Gateway.drain}): new sockets are closed with 1001 and new frames
 *   answered 503; the frames already taken are answered (acks after commit), then every socket
 *   closes with 1001. A frame that fails because the database is unreachable is a 503 error frame,
 *   and a socket that cannot be authenticated for that reason closes with 1013 (try again later).
 * - Keepalive: a `ping` frame every `pingIntervalMs`; a socket silent for `deadTimeoutMs` is
 *   terminated. Connects, frames and disconnects are reported to the {@link PresenceHooks}.
 * - Errors are `{event: "error", data: {detail, status, client_ref?}}` and leave the socket open.
 */
import type { WsClientFrameData, WsClientFrameName, WsServiceEventData, WsServiceEventName } from '@parley/protocol';
import type { Metrics } from '../lib/metrics.js';
import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger, FastifyRequest } from 'fastify';
import type { WebSocket } from 'ws';
import { illFormedDetail, illFormedPath } from '../lib/well-formed.js';
import { AppError, ErrorCode, unauthorized } from '../lib/errors.js';
import type { MessageRate } from '../lib/message-rate.js';
import { isDatabaseUnavailable } from '../db/errors.js';
import type { Audience, BusEvent, EventBus } from './bus.js';
import { checkEnvelope, firstError } from './frames.js';
import { CLOSE } from './notifier.js';
import type { LocalSockets, SocketDirectory } from './presence.js';

interface Conn {
  id: string;
  ws: WebSocket;
  deviceId: string;
  tenantId: string;
  kind: 'owner' | 'agent';
  lastRecv: number;
  lastPing: number;
  /** The TCP socket under the WebSocket, corked while a tick's frames are written. */
  raw: Corkable | undefined;
  /** Serialises the prepare phase of this socket's frames so one sender's order is kept. */
  chain: Promise<unknown>;
  /** API-key sockets: the key, for trust-on-first-use registration. */
  apiKeyId?: string;
  /** False for an API-key socket whose key has no key material yet (`client_key_register` first). */
  registered: boolean;
}

/** The query of `/api/v1/ws`. */
export interface SocketQuery {
  token?: string;
  device_id?: string;
}

/**
 * The {@link SocketQuery} of an upgrade request's parsed query string. `token` and `device_id` are
 * credentials: a repeated one (`?token=a&token=b`, parsed as an array) is a 401 AppError, so the
 * socket closes with 4401 like any other invalid token.
 */
export function socketQuery(raw: unknown): SocketQuery {
  const query: SocketQuery = {};
  for (const name of ['token', 'device_id'] as const) {
    const value = (raw as Record<string, unknown> | undefined)?.[name];
    if (value === undefined) continue;
    if (typeof value !== 'string') throw unauthorized(`${name} must be given once`);
    query[name] = value;
  }
  return query;
}

/**
 * Whether an error of an established socket is the client's doing: a protocol violation `ws`
 * reports (codes `WS_ERR_*`: a frame above the size limit, which `ws` closes with 1009, invalid
 * UTF-8 1007, a bad opcode 1002, …) or a connection the client dropped.
 */
export function isClientSocketFault(err: unknown): boolean {
  const code = (err as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && (code.startsWith('WS_ERR_') || ['ECONNRESET', 'EPIPE', 'ECONNABORTED'].includes(code));
}

/**
 * The WebSocket plugin's `errorHandler` (errors of an established socket). A client fault
 * ({@link isClientSocketFault}) is logged at info and left to `ws`, which already closes the socket
 * with the code of the violation; anything else is logged as an error and the socket terminated.
 */
export function socketErrorHandler(err: Error, socket: WebSocket, request: FastifyRequest): void {
  if (isClientSocketFault(err)) {
    request.log.info({ code: (err as { code?: string }).code, detail: err.message }, 'websocket closed for a client fault');
    return;
  }
  request.log.error({ err }, 'websocket error');
  socket.terminate();
}

/** Who a connecting socket is, as answered by a {@link SocketAuthenticator}. */
export interface SocketIdentity {
  tenantId: string;
  /** The device the socket serves; `''` while unregistered. */
  deviceId: string;
  kind: 'owner' | 'agent';
  /** API-key sockets: the key (frames with `senders: 'apiKey'` are served to them only). */
  apiKeyId?: string;
  /**
   * False for an API-key socket whose key has no key material yet: it gets no deliveries and only
   * `senders: 'apiKey'` frames, `ping` and `pong` until one answers `registerAs`.
   */
  registered: boolean;
}

/**
 * Authenticate a connecting socket (implemented by the devices and api-keys modules, wired by the
 * composition root). Rejects to refuse it: an AppError with code DeviceRevoked closes 4001,
 * Unauthorized 4401, any other AppError 4003; anything else is logged and closes 4401.
 */
export type SocketAuthenticator = (query: SocketQuery) => Promise<SocketIdentity>;

/** Activity of registered sockets, for last_seen (the devices module's LastSeenTracker). */
export interface PresenceHooks {
  /** The device was active now; `force` (connect, registration, disconnect) writes even when throttled. */
  seen(tenantId: string, deviceId: string, force?: boolean): unknown;
}

/** The local recipient of a delivered bus frame, as given to {@link Gateway.onDeliver} hooks. */
export interface FrameRecipient {
  tenantId: string;
  deviceId: string;
}

export interface GatewayDeps {
  bus: EventBus;
  authenticate: SocketAuthenticator;
  presence: PresenceHooks;
  /** 60 messages per minute per device (contract §8), the budget the REST send routes share. */
  limiter: MessageRate;
  pingIntervalMs: number;
  deadTimeoutMs: number;
  log: FastifyBaseLogger;
  /** Connection gauge and frame counters (design §8.32). */
  metrics?: Metrics;
  /** Told when a device's first socket here opens and its last one closes (shared presence, realtime/presence.ts). */
  directory?: SocketDirectory;
}

/** The authenticated device behind a socket, as given to module frame handlers. */
export interface FrameSender {
  tenantId: string;
  deviceId: string;
  kind: 'owner' | 'agent';
  /** This socket's id (to exclude it from fan-out of the sender's own frames). */
  socketId: string;
  /** API-key sockets: the key. */
  apiKeyId?: string;
}

/**
 * An ack frame a module handler answers: an event of the service-event table (@parley/protocol
 * `WS_SERVICE_FRAMES`) with its `data` typed by that event, less `client_ref`, which the gateway
 * adds from the frame.
 * `registerAs` (registration frames): serve the (unregistered) socket as this device from now on,
 * before the ack is sent; ignored on a socket that is already registered.
 */
export type FrameAck = { [K in WsServiceEventName]: { event: K; data: Omit<WsServiceEventData[K], 'client_ref'>; registerAs?: string } }[WsServiceEventName];

/**
 * The unordered rest of a frame's work: `ack` settles after the handler's ordered part resolved
 * and the socket's next frame may already be running (an ack, nothing, or an error frame).
 */
export interface DeferredAck {
  ack: Promise<FrameAck | void>;
}

/**
 * A frame type served by a module (conversations: `message`, `typing`; api-keys:
 * `client_key_register`; rooms: `room_message`; A2A: `a2a_message`, …), registered with
 * {@link Gateway.registerFrame}. `check` validates `data` (400 error frame on failure);
 * `rateLimited` counts the frame against the per-device message limit (contract §8). `handle` runs in
 * the socket's arrival order: the socket's next frame starts once the promise it returns settles.
 * It answers an ack frame (to which the frame's `client_ref` is added), nothing, or a
 * {@link DeferredAck}: then only the part before it resolved is ordered, and the ack (or error) is
 * sent whenever `ack` settles, so a sender's window above 1 pipelines (as `message` frames do
 * with prepare / commit). A handler that defers keeps whatever order its frames need itself (rooms:
 * the release position is taken in the ordered part; frames.ts). Thrown AppErrors become error
 * frames carrying the `client_ref`.
 */
export interface FrameHandler<T> {
  check: { Check(v: unknown): v is T; Errors(v: unknown): Iterable<{ path: string; message: string }> };
  rateLimited?: boolean;
  /**
   * Who may send the frame: `registered` (default) sockets that serve a device (an unregistered
   * socket gets 403); `apiKey`: API-key sockets only, registered or not (others get 400 "<event> is
   * for API-key sockets") — the frame that registers key material.
   */
  senders?: 'registered' | 'apiKey';
  /** Whether acks and error frames (validation included) carry the frame's `client_ref` (default true). */
  echoClientRef?: boolean;
  /** Close the socket after the error frame of a failed frame when this answers a close. */
  closeOnError?(err: unknown): { code: number; reason: string } | undefined;
  handle(sender: FrameSender, data: T): Promise<FrameAck | DeferredAck | void>;
}

/** A hook seeing each write of a bus frame of its event to a local socket (not to the excluded socket). */
export type DeliveryHook = (recipient: FrameRecipient, data: unknown) => void;

interface Corkable {
  cork(): void;
  uncork(): void;
}

type SocketOpen = 1;
const OPEN: SocketOpen = 1;

export class Gateway implements LocalSockets {
  private readonly byDevice = new Map<string, Set<Conn>>();
  private readonly ownersByTenant = new Map<string, Set<Conn>>();
  private readonly unsubscribe: () => void;
  private readonly timer: NodeJS.Timeout;
  private readonly corked = new Set<Corkable>();
  /** API-key sockets waiting for `client_key_register` (no device yet, so no deliveries). */
  private readonly pending = new Set<Conn>();
  private readonly handlers = new Map<string, FrameHandler<never>>();
  private readonly deliveryHooks = new Map<string, DeliveryHook[]>();
  /** False once {@link drain} started: new sockets and frames are refused. */
  private accepting = true;
  /** Frames taken and not answered yet (their ordered part, then their deferred ack). */
  private readonly inFlight = new Set<Promise<unknown>>();

  constructor(private readonly deps: GatewayDeps) {
    const offFrames = deps.bus.subscribe((e) => this.onBusEvent(e));
    const offGap = deps.bus.onGap?.(() => this.closeAll(1012, 'event bus reconnected: reconnect and catch up by cursor'));
    this.unsubscribe = () => (offFrames(), offGap?.());
    const tick = Math.max(5, Math.min(deps.pingIntervalMs, deps.deadTimeoutMs) / 3);
    this.timer = setInterval(() => this.sweep(), tick);
    this.timer.unref();
  }

  /**
   * Serve frames of `event` (a client frame of @parley/protocol `WS_CLIENT_FRAMES`) with `handler`
   * (conversations, api-keys, rooms, A2A); the handler's `data` is the frame's type in that table
   * (`WsClientFrameData`).
   */
  registerFrame<K extends WsClientFrameName>(event: K, handler: FrameHandler<WsClientFrameData[K]>): void {
    if (this.handlers.has(event) || ['ping', 'pong'].includes(event)) {
      throw new Error(`frame ${event} is already served`);
    }
    this.handlers.set(event, handler as unknown as FrameHandler<never>);
  }

  /** The client frames served by registered handlers, besides `ping` and `pong` (which the gateway answers itself). */
  servedFrames(): string[] {
    return [...this.handlers.keys()];
  }

  /** Call `hook` for every local socket a bus frame of `event` is written to. */
  onDeliver(event: WsServiceEventName, hook: DeliveryHook): void {
    const hooks = this.deliveryHooks.get(event);
    if (hooks) hooks.push(hook);
    else this.deliveryHooks.set(event, [hook]);
  }

  /** Whether this instance has a registered socket of `deviceId`. */
  isOnline(deviceId: string): boolean {
    return (this.byDevice.get(deviceId)?.size ?? 0) > 0;
  }

  /** Devices with at least one registered socket on this instance. */
  localDevices(): Iterable<string> {
    return this.byDevice.keys();
  }

  /** Number of open, authenticated sockets on this instance. */
  get size(): number {
    let n = 0;
    for (const s of this.byDevice.values()) n += s.size;
    return n;
  }

  /**
   * Handle a freshly upgraded socket with the request's parsed query string ({@link socketQuery}).
   * Frames that arrive during authentication are queued.
   */
  handle(ws: WebSocket, query: unknown, raw?: Corkable): void {
    if (!this.accepting) return ws.close(1001, 'server shutting down');
    const early: string[] = [];
    let conn: Conn | undefined;
    ws.on('message', (raw) => {
      const text = raw.toString();
      if (conn) this.onFrame(conn, text);
      else early.push(text);
    });
    ws.on('close', () => {
      if (!conn) return;
      this.deps.metrics?.wsConnections.dec();
      this.remove(conn);
    });
    ws.on('error', () => undefined);
    Promise.resolve(query).then((q) => this.deps.authenticate(socketQuery(q))).then(
      (who) => {
        if (ws.readyState !== OPEN) return;
        if (!this.accepting) return ws.close(1001, 'server shutting down');
        conn = { id: randomUUID(), ws, ...who, lastRecv: Date.now(), lastPing: Date.now(), chain: Promise.resolve(), raw };
        this.deps.metrics?.wsConnections.inc();
        if (conn.registered) {
          this.add(conn);
          void this.deps.presence.seen(conn.tenantId, conn.deviceId, true);
        } else {
          this.pending.add(conn);
        }
        for (const text of early.splice(0)) this.onFrame(conn, text);
      },
      (err: unknown) => {
        if (isDatabaseUnavailable(err)) return ws.close(1013, 'the database is unavailable; reconnect shortly');
        const code =
          err instanceof AppError
            ? err.code === ErrorCode.DeviceRevoked
              ? CLOSE.revoked
              : err.code === ErrorCode.Unauthorized
                ? CLOSE.unauthorized
                : CLOSE.forbidden
            : CLOSE.unauthorized;
        if (!(err instanceof AppError)) this.deps.log.error({ err }, 'websocket authentication failed');
        ws.close(code, err instanceof AppError ? err.detail : 'authentication failed');
      },
    );
  }

  /** An unregistered socket registered its key material: serve it as `deviceId` from now on. */
  private register(c: Conn, deviceId: string): void {
    this.pending.delete(c);
    c.deviceId = deviceId;
    c.registered = true;
    this.add(c);
    void this.deps.presence.seen(c.tenantId, c.deviceId, true);
  }

  private add(c: Conn): void {
    let set = this.byDevice.get(c.deviceId);
    if (!set) {
      this.byDevice.set(c.deviceId, (set = new Set()));
      this.deps.directory?.up(c.deviceId);
    }
    set.add(c);
    if (c.kind === 'owner') {
      let owners = this.ownersByTenant.get(c.tenantId);
      if (!owners) this.ownersByTenant.set(c.tenantId, (owners = new Set()));
      owners.add(c);
    }
  }

  private remove(c: Conn): void {
    if (!c.registered) {
      this.pending.delete(c);
      return;
    }
    const set = this.byDevice.get(c.deviceId);
    if (set?.delete(c) && set.size === 0) {
      this.byDevice.delete(c.deviceId);
      this.deps.directory?.down(c.deviceId);
    }
    const owners = this.ownersByTenant.get(c.tenantId);
    if (owners?.delete(c) && owners.size === 0) this.ownersByTenant.delete(c.tenantId);
    void this.deps.presence.seen(c.tenantId, c.deviceId, true);
  }

  private send<K extends WsServiceEventName>(c: Conn, event: K, data: WsServiceEventData[K]): void {
    this.write(c, JSON.stringify({ event, data }));
  }

  /**
   * Write a frame. The first write to a socket in a tick corks it and every corked socket is
   * uncorked on the next turn of the event loop, so a burst of deliveries and acks leaves in one
   * TCP write per socket instead of one per frame.
   */
  private write(c: Conn, text: string): void {
    if (c.ws.readyState !== OPEN) return;
    this.deps.metrics?.wsFramesOut.inc();
    if (c.raw && !this.corked.has(c.raw)) {
      c.raw.cork();
      this.corked.add(c.raw);
      if (this.corked.size === 1) setImmediate(() => this.uncorkAll());
    }
    c.ws.send(text);
  }

  private uncorkAll(): void {
    for (const s of this.corked) s.uncork();
    this.corked.clear();
  }

  private sendError(c: Conn, status: number, detail: string, clientRef?: unknown, extra: Record<string, unknown> = {}): void {
    this.send(c, 'error', { detail, status, ...(typeof clientRef === 'string' ? { client_ref: clientRef } : {}), ...extra });
  }

  private onFrame(c: Conn, text: string): void {
    c.lastRecv = Date.now();
    this.deps.metrics?.wsFramesIn.inc();
    if (c.registered) void this.deps.presence.seen(c.tenantId, c.deviceId);
    let frame: unknown;
    try {
      frame = JSON.parse(text);
    } catch {
      return this.sendError(c, 400, 'frame is not valid JSON');
    }
    if (!checkEnvelope.Check(frame)) return this.sendError(c, 400, 'a frame is {event, data}');
    const { event, data } = frame;
    const clientRef = (data as { client_ref?: unknown } | null | undefined)?.client_ref;
    const illFormed = illFormedPath(frame);
    if (illFormed !== undefined) return this.sendError(c, 400, illFormedDetail('frame', illFormed), illFormedPath(clientRef) === undefined ? clientRef : undefined);
    if (event === 'pong') return;
    if (event === 'ping') return this.send(c, 'pong', {});
    const h = this.handlers.get(event);
    if (!c.registered && h?.senders !== 'apiKey') return this.sendError(c, 403, 'register key material first (client_key_register)', clientRef);
    if (!h) return this.sendError(c, 400, `unknown event "${event}"`, clientRef);
    if (h.senders === 'apiKey' && !c.apiKeyId) return this.sendError(c, 400, `${event} is for API-key sockets`);
    const ref = h.echoClientRef === false ? undefined : clientRef;
    if (!h.check.Check(data)) return this.sendError(c, 400, `invalid ${event}: ${firstError(h.check, data)}`, ref);
    if (!this.accepting) return this.sendError(c, 503, 'the server is shutting down: reconnect and send again', ref);
    c.chain = this.track(c.chain.then(() => this.onModuleFrame(c, h, data, typeof ref === 'string' ? ref : undefined)));
  }

  /** Rate limit and run the handler's ordered part in order; a deferred ack is sent when it settles, off the chain. */
  private async onModuleFrame(c: Conn, h: FrameHandler<never>, data: never, clientRef: string | undefined): Promise<void> {
    const answer = (ack: FrameAck | void) => {
      if (!ack) return;
      if (ack.registerAs !== undefined && !c.registered) this.register(c, ack.registerAs);
      this.send(c, ack.event, { ...ack.data, ...(clientRef ? { client_ref: clientRef } : {}) });
    };
    const fail = (err: unknown) => {
      this.frameError(c, err, clientRef);
      const close = h.closeOnError?.(err);
      if (close) c.ws.close(close.code, close.reason);
    };
    try {
      if (h.rateLimited) await this.deps.limiter.consume(c.deviceId);
      const sender: FrameSender = { tenantId: c.tenantId, deviceId: c.deviceId, kind: c.kind, socketId: c.id, ...(c.apiKeyId ? { apiKeyId: c.apiKeyId } : {}) };
      const out = await h.handle(sender, data);
      if (out && 'ack' in out) this.track(out.ack.then(answer, fail));
      else answer(out);
    } catch (err) {
      fail(err);
    }
  }

  private frameError(c: Conn, err: unknown, clientRef?: string): void {
    if (err instanceof AppError) {
      return this.sendError(c, err.status, err.detail, clientRef, err.retryAfterMs !== undefined ? { retry_after_ms: err.retryAfterMs } : {});
    }
    if (isDatabaseUnavailable(err)) {
      this.deps.log.warn({ err }, 'database unavailable');
      return this.sendError(c, 503, 'the database is unavailable; retry shortly', clientRef, { retry_after_ms: 1000 });
    }
    this.deps.log.error({ err }, 'websocket frame failed');
    this.sendError(c, 500, 'internal server error', clientRef);
  }

  private track<T>(p: Promise<T>): Promise<T> {
    this.inFlight.add(p);
    const done = () => this.inFlight.delete(p);
    p.then(done, done);
    return p;
  }

  private onBusEvent(e: BusEvent): void {
    if (e.type === 'close_device') {
      for (const c of this.byDevice.get(e.deviceId) ?? []) c.ws.close(e.code, e.reason);
      return;
    }
    if (e.type === 'frames') {
      for (const f of e.frames) this.deliver({ deviceIds: f.deviceIds }, e.event, f.data);
      return;
    }
    this.deliver(e.to, e.event, e.data, e.excludeSocket);
  }

  /**
   * This instance's sockets of `to`. One device and no tenant owners (a message's or a room
   * envelope's recipient, the common case) is that device's own set, not a copy.
   */
  private targetsOf(to: Audience): ReadonlySet<Conn> | undefined {
    const ids = to.deviceIds;
    if (!to.ownersOfTenant && ids?.length === 1) return this.byDevice.get(ids[0]!);
    const targets = new Set<Conn>();
    for (const id of ids ?? []) for (const c of this.byDevice.get(id) ?? []) targets.add(c);
    if (to.ownersOfTenant) for (const c of this.ownersByTenant.get(to.ownersOfTenant) ?? []) targets.add(c);
    return targets;
  }

  /** Write `{event, data}` to this instance's sockets of the audience (but `excludeSocket`), calling the event's delivery hooks. */
  private deliver(to: Audience, event: string, data: unknown, excludeSocket?: string): void {
    const targets = this.targetsOf(to);
    if (targets === undefined || targets.size === 0) return;
    const text = JSON.stringify({ event, data });
    const hooks = this.deliveryHooks.get(event);
    for (const c of targets) {
      if (c.id === excludeSocket || c.ws.readyState !== OPEN) continue;
      this.write(c, text);
      if (hooks) for (const hook of hooks) hook({ tenantId: c.tenantId, deviceId: c.deviceId }, data);
    }
  }

  private sweep(): void {
    const now = Date.now();
    const ping = JSON.stringify({ event: 'ping', data: {} });
    for (const set of this.byDevice.values()) {
      for (const c of set) {
        if (now - c.lastRecv >= this.deps.deadTimeoutMs) {
          c.ws.terminate();
        } else if (now - c.lastPing >= this.deps.pingIntervalMs) {
          c.lastPing = now;
          this.write(c, ping);
        }
      }
    }
  }

  /** Close every socket of this instance with `code` (they may reconnect). */
  closeAll(code: number, reason: string): void {
    for (const set of this.byDevice.values()) for (const c of set) c.ws.close(code, reason);
    for (const c of this.pending) c.ws.close(code, reason);
  }

  /**
   * Graceful shutdown (SIGTERM): refuse new sockets (1001) and frames (503 error frames), wait up
   * to `ms` until every frame already taken is answered, then {@link close}.
   */
  async drain(ms: number): Promise<void> {
    this.accepting = false;
    const end = Date.now() + ms;
    while (this.inFlight.size > 0 && Date.now() < end) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([Promise.allSettled([...this.inFlight]), new Promise((r) => (timer = setTimeout(r, end - Date.now())))]);
      clearTimeout(timer);
    }
    this.close();
  }

  /** Stop timers and close every socket with 1001 (going away). */
  close(): void {
    clearInterval(this.timer);
    this.unsubscribe();
    this.closeAll(1001, 'server shutting down');
  }
}

/**
 * The WebSocket gateway (SPEC §4.18, §6.1; DESIGN §6, §7) at `/api/v1/ws?token=…`.
 *
 * - Authentication: a device JWT, or an owner JWT plus `device_id` naming the owner's ACTIVE
 *   device. Refusals accept the socket, then close it: 4401 missing/invalid token, 4001 revoked,
 *   4003 not ACTIVE or not the caller's device.
 * - `message` frames are validated, rate limited (60/min per device), prepared in arrival order,
 *   committed by group commit and acknowledged with `message_ack` only after commit; the stored
 *   message is published on the bus to the recipient device and the sender's other sockets.
 * - `typing` is relayed to the counterpart with `device_id` filled in by the server.
 * - Keepalive: a `ping` frame every `pingIntervalMs`; a socket silent for `deadTimeoutMs` is
 *   terminated. Disconnects update last_seen.
 * - Errors are `{event: "error", data: {detail, status, client_ref?}}` and leave the socket open.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { RateLimiterAbstract, RateLimiterRes } from 'rate-limiter-flexible';
import type { WebSocket } from 'ws';
import type { Authenticator } from '../auth/authenticator.js';
import type { Db } from '../db/client.js';
import { withTenant } from '../db/tenant.js';
import { illFormedDetail, illFormedPath } from '../lib/well-formed.js';
import { AppError, ErrorCode } from '../lib/errors.js';
import { asUuid } from '../lib/ids.js';
import type { ApiKeyService } from '../modules/api-keys/service.js';
import type { MessageService } from '../modules/conversations/messages.js';
import type { LastSeenTracker } from '../modules/devices/last-seen.js';
import { getDevice } from '../modules/devices/repo.js';
import type { Presence } from '../modules/devices/service.js';
import type { BusEvent, EventBus } from './bus.js';
import { checkClientKey, checkEnvelope, checkMessage, checkTyping, firstError, type ClientKeyFrame, type MessageFrame } from './frames.js';
import { CLOSE } from './notifier.js';

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

export interface GatewayDeps {
  db: Db;
  bus: EventBus;
  authenticator: Authenticator;
  messages: MessageService;
  apiKeys: ApiKeyService;
  lastSeen: LastSeenTracker;
  /** 60 messages per minute per device (SPEC §8); undefined when rate limits are off. */
  limiter: RateLimiterAbstract | undefined;
  pingIntervalMs: number;
  deadTimeoutMs: number;
  log: FastifyBaseLogger;
}

/** The authenticated device behind a socket, as given to module frame handlers. */
export interface FrameSender {
  tenantId: string;
  deviceId: string;
  kind: 'owner' | 'agent';
  /** This socket's id (to exclude it from fan-out of the sender's own frames). */
  socketId: string;
}

/** An ack frame a module handler answers; the gateway adds the frame's `client_ref`. */
export interface FrameAck {
  event: string;
  data: Record<string, unknown>;
}

/**
 * The unordered rest of a frame's work: `ack` settles after the handler's ordered part resolved
 * and the socket's next frame may already be running (an ack, nothing, or an error frame).
 */
export interface DeferredAck {
  ack: Promise<FrameAck | void>;
}

/**
 * A frame type served by a module (rooms: `room_message`; A2A: `a2a_message`, …), registered with
 * {@link Gateway.registerFrame}. `check` validates `data` (400 error frame on failure);
 * `rateLimited` counts the frame against the per-device message limit (SPEC §8). `handle` runs in
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
  handle(sender: FrameSender, data: T): Promise<FrameAck | DeferredAck | void>;
}

interface Corkable {
  cork(): void;
  uncork(): void;
}

type SocketOpen = 1;
const OPEN: SocketOpen = 1;

export class Gateway implements Presence {
  private readonly byDevice = new Map<string, Set<Conn>>();
  private readonly ownersByTenant = new Map<string, Set<Conn>>();
  private readonly unsubscribe: () => void;
  private readonly timer: NodeJS.Timeout;
  private readonly corked = new Set<Corkable>();
  /** API-key sockets waiting for `client_key_register` (no device yet, so no deliveries). */
  private readonly pending = new Set<Conn>();
  private readonly handlers = new Map<string, FrameHandler<never>>();

  constructor(private readonly deps: GatewayDeps) {
    this.unsubscribe = deps.bus.subscribe((e) => this.onBusEvent(e));
    const tick = Math.max(5, Math.min(deps.pingIntervalMs, deps.deadTimeoutMs) / 3);
    this.timer = setInterval(() => this.sweep(), tick);
    this.timer.unref();
  }

  /** Serve frames of `event` with `handler` (module frames: rooms, A2A). */
  registerFrame<T>(event: string, handler: FrameHandler<T>): void {
    if (this.handlers.has(event) || ['message', 'typing', 'ping', 'pong', 'client_key_register'].includes(event)) {
      throw new Error(`frame ${event} is already served`);
    }
    this.handlers.set(event, handler as unknown as FrameHandler<never>);
  }

  isOnline(deviceId: string): boolean {
    return (this.byDevice.get(deviceId)?.size ?? 0) > 0;
  }

  /** Number of open, authenticated sockets on this instance. */
  get size(): number {
    let n = 0;
    for (const s of this.byDevice.values()) n += s.size;
    return n;
  }

  /** Handle a freshly upgraded socket. Frames that arrive during authentication are queued. */
  handle(ws: WebSocket, query: { token?: string; device_id?: string }, raw?: Corkable): void {
    const early: string[] = [];
    let conn: Conn | undefined;
    ws.on('message', (raw) => {
      const text = raw.toString();
      if (conn) this.onFrame(conn, text);
      else early.push(text);
    });
    ws.on('close', () => {
      if (conn) this.remove(conn);
    });
    ws.on('error', () => undefined);
    this.authenticate(query).then(
      (who) => {
        if (ws.readyState !== OPEN) return;
        conn = { id: randomUUID(), ws, ...who, lastRecv: Date.now(), lastPing: Date.now(), chain: Promise.resolve(), raw };
        if (conn.registered) {
          this.add(conn);
          void this.deps.lastSeen.seen(conn.tenantId, conn.deviceId, true);
        } else {
          this.pending.add(conn);
        }
        for (const text of early.splice(0)) this.onFrame(conn, text);
      },
      (err: unknown) => {
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

  private async authenticate(query: { token?: string; device_id?: string }): Promise<Pick<Conn, 'deviceId' | 'tenantId' | 'kind' | 'apiKeyId' | 'registered'>> {
    if (query.token?.startsWith('svc_agent_sk_')) return this.authenticateApiKey(query.token);
    const principal = await this.deps.authenticator.authenticate(query.token);
    if (principal.kind === 'device') return { deviceId: principal.deviceId, tenantId: principal.tenantId, kind: principal.deviceKind, registered: true };
    if (!principal.tenantId) throw new AppError(ErrorCode.Forbidden, 'the user belongs to no tenant');
    const deviceId = asUuid(query.device_id);
    if (!deviceId) throw new AppError(ErrorCode.Forbidden, 'owner sockets need device_id');
    const tenantId = principal.tenantId;
    const d = await withTenant(this.deps.db, tenantId, (tx) => getDevice(tx, deviceId));
    if (!d || d.kind !== 'owner' || d.ownerSub !== principal.sub) throw new AppError(ErrorCode.Forbidden, 'device_id is not one of your owner devices');
    if (d.status === 'REVOKED') throw new AppError(ErrorCode.DeviceRevoked, 'device revoked');
    if (d.status !== 'ACTIVE') throw new AppError(ErrorCode.Forbidden, 'device is not active');
    return { deviceId, tenantId, kind: 'owner', registered: true };
  }

  /** An API key socket: its bound device (which must be ACTIVE), or unregistered until `client_key_register`. */
  private async authenticateApiKey(rawKey: string) {
    const key = await this.deps.apiKeys.resolve(rawKey);
    const base = { tenantId: key.tenantId, kind: 'agent' as const, apiKeyId: key.apiKeyId };
    if (!key.deviceId) return { ...base, deviceId: '', registered: false };
    const deviceId = key.deviceId;
    const d = await withTenant(this.deps.db, key.tenantId, (tx) => getDevice(tx, deviceId));
    if (!d || d.status === 'REVOKED') throw new AppError(ErrorCode.DeviceRevoked, 'device revoked');
    if (d.status !== 'ACTIVE') throw new AppError(ErrorCode.Forbidden, 'device is not active');
    return { ...base, deviceId, registered: true };
  }

  /** Trust on first use: bind the key to the registered material, then serve the socket as that device. */
  private async onClientKeyRegister(c: Conn, data: ClientKeyFrame): Promise<void> {
    try {
      const accepted = await this.deps.apiKeys.registerClientKey(c.tenantId, c.apiKeyId!, data);
      if (!c.registered) {
        this.pending.delete(c);
        c.deviceId = accepted.device_id;
        c.registered = true;
        this.add(c);
        void this.deps.lastSeen.seen(c.tenantId, c.deviceId, true);
      }
      this.send(c, 'client_key_accepted', accepted);
    } catch (err) {
      this.frameError(c, err);
      if (err instanceof AppError && err.code === ErrorCode.Conflict) c.ws.close(CLOSE.forbidden, 'key material does not match; rotate the API key');
    }
  }

  private add(c: Conn): void {
    let set = this.byDevice.get(c.deviceId);
    if (!set) this.byDevice.set(c.deviceId, (set = new Set()));
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
    if (set?.delete(c) && set.size === 0) this.byDevice.delete(c.deviceId);
    const owners = this.ownersByTenant.get(c.tenantId);
    if (owners?.delete(c) && owners.size === 0) this.ownersByTenant.delete(c.tenantId);
    void this.deps.lastSeen.seen(c.tenantId, c.deviceId, true);
  }

  private send(c: Conn, event: string, data: unknown): void {
    this.write(c, JSON.stringify({ event, data }));
  }

  /**
   * Write a frame. The first write to a socket in a tick corks it and every corked socket is
   * uncorked on the next turn of the event loop, so a burst of deliveries and acks leaves in one
   * TCP write per socket instead of one per frame.
   */
  private write(c: Conn, text: string): void {
    if (c.ws.readyState !== OPEN) return;
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
    if (c.registered) void this.deps.lastSeen.seen(c.tenantId, c.deviceId);
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
    if (!c.registered && event !== 'client_key_register' && event !== 'ping' && event !== 'pong') {
      return this.sendError(c, 403, 'register key material first (client_key_register)', clientRef);
    }
    switch (event) {
      case 'client_key_register':
        if (!c.apiKeyId) return this.sendError(c, 400, 'client_key_register is for API-key sockets');
        if (!checkClientKey.Check(data)) return this.sendError(c, 400, `invalid client_key_register: ${firstError(checkClientKey, data)}`);
        c.chain = c.chain.then(() => this.onClientKeyRegister(c, data));
        return;
      case 'pong':
        return;
      case 'ping':
        return this.send(c, 'pong', {});
      case 'message':
        if (!checkMessage.Check(data)) return this.sendError(c, 400, `invalid message: ${firstError(checkMessage, data)}`, clientRef);
        c.chain = c.chain.then(() => this.onMessage(c, data));
        return;
      case 'typing':
        if (!checkTyping.Check(data)) return this.sendError(c, 400, `invalid typing: ${firstError(checkTyping, data)}`);
        c.chain = c.chain.then(() => this.onTyping(c, data.conversation_id));
        return;
      default: {
        const h = this.handlers.get(event);
        if (!h) return this.sendError(c, 400, `unknown event "${event}"`, clientRef);
        if (!h.check.Check(data)) return this.sendError(c, 400, `invalid ${event}: ${firstError(h.check, data)}`, clientRef);
        c.chain = c.chain.then(() => this.onModuleFrame(c, h, data, typeof clientRef === 'string' ? clientRef : undefined));
        return;
      }
    }
  }

  /** Rate limit and run the handler's ordered part in order; a deferred ack is sent when it settles, off the chain. */
  private async onModuleFrame(c: Conn, h: FrameHandler<never>, data: never, clientRef: string | undefined): Promise<void> {
    const answer = (ack: FrameAck | void) => {
      if (ack) this.send(c, ack.event, { ...ack.data, ...(clientRef ? { client_ref: clientRef } : {}) });
    };
    try {
      if (h.rateLimited) await this.consumeRate(c);
      const out = await h.handle({ tenantId: c.tenantId, deviceId: c.deviceId, kind: c.kind, socketId: c.id }, data);
      if (out && 'ack' in out) out.ack.then(answer, (err: unknown) => this.frameError(c, err, clientRef));
      else answer(out);
    } catch (err) {
      this.frameError(c, err, clientRef);
    }
  }

  /** Count one message against the device's per-minute limit (SPEC §8); 429 AppError when exceeded. */
  private async consumeRate(c: Conn): Promise<void> {
    if (!this.deps.limiter) return;
    try {
      await this.deps.limiter.consume(c.deviceId);
    } catch (res) {
      if (res instanceof Error) throw res; // the limiter's store failed: a 500, not a 429
      throw new AppError(ErrorCode.RateLimited, `rate limit exceeded: ${this.deps.limiter.points} messages per minute`, (res as RateLimiterRes).msBeforeNext);
    }
  }

  /** Rate limit and prepare in order; commit and ack without holding up the next frame. */
  private async onMessage(c: Conn, data: MessageFrame): Promise<void> {
    const { client_ref: clientRef, ...input } = data;
    try {
      await this.consumeRate(c);
      const prepared = await this.deps.messages.prepare(c.tenantId, c.deviceId, input);
      this.deps.messages.commit(prepared, c.id).then(
        (m) => this.send(c, 'message_ack', { message_id: m.message_id, timestamp: m.timestamp, cursor: m.cursor, ...(clientRef ? { client_ref: clientRef } : {}) }),
        (err: unknown) => this.frameError(c, err, clientRef),
      );
    } catch (err) {
      this.frameError(c, err, clientRef);
    }
  }

  private async onTyping(c: Conn, conversationId: string): Promise<void> {
    try {
      const { peer } = await this.deps.messages.counterpart(c.tenantId, conversationId, c.deviceId);
      await this.deps.bus.publish({ type: 'frame', to: { deviceIds: [peer] }, event: 'typing', data: { conversation_id: conversationId, device_id: c.deviceId } });
    } catch (err) {
      this.frameError(c, err);
    }
  }

  private frameError(c: Conn, err: unknown, clientRef?: string): void {
    if (err instanceof AppError) {
      return this.sendError(c, err.status, err.detail, clientRef, err.retryAfterMs !== undefined ? { retry_after_ms: err.retryAfterMs } : {});
    }
    this.deps.log.error({ err }, 'websocket frame failed');
    this.sendError(c, 500, 'internal server error', clientRef);
  }

  private onBusEvent(e: BusEvent): void {
    if (e.type === 'close_device') {
      for (const c of this.byDevice.get(e.deviceId) ?? []) c.ws.close(e.code, e.reason);
      return;
    }
    const targets = new Set<Conn>();
    for (const id of e.to.deviceIds ?? []) for (const c of this.byDevice.get(id) ?? []) targets.add(c);
    if (e.to.ownersOfTenant) for (const c of this.ownersByTenant.get(e.to.ownersOfTenant) ?? []) targets.add(c);
    if (targets.size === 0) return;
    const text = JSON.stringify({ event: e.event, data: e.data });
    const message = e.event === 'message' ? (e.data as { message_id: string; sender_device_id: string }) : undefined;
    for (const c of targets) {
      if (c.id === e.excludeSocket || c.ws.readyState !== OPEN) continue;
      this.write(c, text);
      if (message && c.deviceId !== message.sender_device_id) this.deps.messages.markDelivered(c.tenantId, message.message_id);
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

  /** Stop timers and close every socket with 1001 (going away). */
  close(): void {
    clearInterval(this.timer);
    this.unsubscribe();
    for (const set of this.byDevice.values()) for (const c of set) c.ws.close(1001, 'server shutting down');
    for (const c of this.pending) c.ws.close(1001, 'server shutting down');
  }
}

/**
 * The local plugin (contract §4.19 "needs the local plugin running"): the loopback HTTP
 * API of `plugin-api.ts`, served by a running agent (`parley-agent run`) so that an MCP tool
 * server can send and read end-to-end encrypted messages without holding keys. Plaintext only
 * crosses loopback; the service only sees ciphertext.
 *
 * - Bound to 127.0.0.1:{@link DEFAULT_PLUGIN_PORT} by default; a request from a non-loopback
 *   address is refused (403) before anything else, then one whose `Host` is not a loopback name
 *   with the plugin's port (DNS rebinding: a web page of `attacker.example` resolved to 127.0.0.1)
 *   (403), then the bearer token of `<state-dir>/plugin-token` is checked in constant time (401).
 * - The token is 64 lowercase hex characters; a token file holding anything else (empty after a
 *   crash or a full disk, `touch`ed, edited) is replaced by a new random token, written to a
 *   temporary file (mode 0600, fsynced) renamed over it.
 * - Bodies are JSON (at most 256 KiB), validated with TypeBox's compiler against the schemas of
 *   `plugin-api.ts`; errors are `{detail}`.
 * - `<state-dir>/plugin.json` names the running plugin (`url`, `pid`, `device_id`, `started_at`)
 *   for `parley-agent status` / `doctor`, written the same way (a temporary file renamed over it,
 *   so a reader never sees it half written); it is removed when the plugin stops.
 * - `/a2a/{hub_address}` serves A2A 1.0 to any A2A client (`a2a-proxy.ts`, `a2a-remote-card.ts`):
 *   the remote agent's verified card at `/.well-known/agent-card.json` and its JSON-RPC endpoint,
 *   carried end to end encrypted over the A2A channel; with `a2aUpstream` incoming A2A calls are
 *   answered from the agent's own A2A server (`a2a-upstream.ts`). Tunnel frames stay out of the inbox.
 * - Messages go to an A2A channel, an owner conversation, a room the agent is a member of, or —
 *   without a target — to the owner: one copy in each owner conversation (one per owner device).
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { ParleyApiError, ParleyNetworkError } from '../client/errors.js';
import type { ParleyClient } from '../client/rest.js';
import type { MessageType } from '@parley/protocol';
import type { RealtimeClient } from '../realtime/client.js';
import { RealtimeError } from '../realtime/types.js';
import { normalizeHubAddress, type SecureChannelInfo, type SecureChannelMessage, type SecureChannels } from '../secure/a2a.js';
import type { SecureMessenger } from '../secure/messenger.js';
import type { RoomMessenger, RoomSendReceipt } from '../secure/rooms.js';
import { SecureMessengerError, type SecureMessage } from '../secure/types.js';
import { jsonRpcError } from './a2a-errors.js';
import { createA2aProxy } from './a2a-proxy.js';
import { createA2aRecorder } from './a2a-record.js';
import { cardGate, RemoteCardError, remoteAgentCard } from './a2a-remote-card.js';
import { isA2aFrame } from './a2a-tunnel.js';
import { refuseA2aCalls, serveA2aUpstream } from './a2a-upstream.js';
import { parseSince, PluginInbox } from './inbox.js';
import { openAgentStore, type StateStore, type StateStoreOptions } from './state-store.js';
import {
  DEFAULT_PLUGIN_PORT,
  OpenChannelBody,
  PLUGIN_TOKEN_FILE,
  PollQuery,
  SendMessageBody,
  type PluginChannel,
  type PluginMessage,
  type PluginSendResult,
  type PluginStatus,
} from './plugin-api.js';

/** File (in the state directory) naming the running plugin. */
export const PLUGIN_INFO_FILE = 'plugin.json';
const MAX_BODY = 256 * 1024;

/** What the plugin serves from: a running agent (API key or enrolled device). */
export interface PluginBackend {
  auth: 'api_key' | 'device';
  server: string;
  deviceId: string;
  /** REST client acting as the agent (audit entries and spans of A2A calls, `a2a-record.ts`). */
  client: ParleyClient;
  /** Owner conversations (and the pairwise conversations of rooms). */
  messenger: SecureMessenger;
  /** The agent's owner conversations (one per owner device), those a message without a target goes to. */
  ownerConversations(): string[];
  /** Rooms the agent is a member of. */
  rooms: RoomMessenger;
  /** A2A channels. */
  channels: SecureChannels;
  realtime: RealtimeClient;
  /** MLS enabled for owner conversations. */
  mls: boolean;
  /** The hub address of the agent, when known. */
  hubAddress(): string | null;
  /** The agent's state store: the plugin keeps its inbox there when serving the same directory. */
  store?: StateStore;
}

/** Options of {@link startPlugin}. */
export interface StartPluginOptions extends StateStoreOptions {
  backend: PluginBackend;
  /** The agent's state directory (token, inbox, plugin.json). */
  stateDir: string;
  /** Default 127.0.0.1. */
  host?: string;
  /** Default {@link DEFAULT_PLUGIN_PORT}; 0 picks a free port. */
  port?: number;
  /** Inbox capacity (default PLUGIN_INBOX_LIMIT). */
  inboxLimit?: number;
  log?: (line: string) => void;
  /**
   * The agent's own A2A JSON-RPC endpoint on loopback (`--a2a-upstream`): A2A calls arriving on
   * its channels are answered from there (`a2a-upstream.ts`). Without it they get `upstream_down`.
   */
  a2aUpstream?: string;
  /** Timeouts of the `/a2a/{hub_address}` calling side (`a2a-proxy.ts`). */
  a2a?: { answerTimeoutMs?: number; openTimeoutMs?: number };
}

/** A running plugin. */
export interface RunningPlugin {
  /** `http://host:port`. */
  url: string;
  port: number;
  host: string;
  token: string;
  inbox: PluginInbox;
  close(): Promise<void>;
}

import { isLoopbackAddress } from '@parley/protocol';
/** Loopback checks (shared with the service): where a plugin token may be sent, which clients the plugin serves. */
export { isLoopbackAddress, isLoopbackHost, isLoopbackUrl } from '@parley/protocol';

/** What a plugin token looks like: 32 random bytes in lowercase hex. */
const PLUGIN_TOKEN = /^[0-9a-f]{64}$/;

/**
 * Read the plugin token of a state directory ({@link ensureTokenFile} of `plugin-token`).
 */
export function ensurePluginToken(stateDir: string): Promise<string> {
  return ensureTokenFile(stateDir, PLUGIN_TOKEN_FILE);
}

/**
 * Read a bearer token kept in file `fileName` of a state directory (the plugin's `plugin-token`,
 * the MCP tool server's `mcp-http-token`). When the file is missing, or holds anything else than
 * 64 lowercase hex characters (after trimming) — e.g. empty after a crash between creating and
 * writing it, or a full disk — a new random token (32 bytes, hex) is written atomically
 * (temporary file mode 0600, fsynced, renamed over the file) and returned.
 */
export async function ensureTokenFile(stateDir: string, fileName: string): Promise<string> {
  const file = path.join(stateDir, fileName);
  try {
    const current = (await readFile(file, 'utf8')).trim();
    if (PLUGIN_TOKEN.test(current)) return current;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  await mkdir(stateDir, { recursive: true, mode: 0o700 });
  const token = randomBytes(32).toString('hex');
  await writeFileAtomic(file, `${token}\n`);
  return token;
}

/**
 * Replace `file` with `text` atomically: written to a temporary file next to it (mode 0600,
 * fsynced), then renamed over it, so a reader sees the old or the new contents, never a part.
 * The temporary file is removed when anything fails.
 */
export async function writeFileAtomic(file: string, text: string): Promise<void> {
  const temp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    const handle = await open(temp, 'wx', 0o600);
    try {
      await handle.writeFile(text, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, file);
  } catch (err) {
    await rm(temp, { force: true }).catch(() => undefined);
    throw err;
  }
}

/**
 * Constant-time comparison of a presented bearer token with the expected one. False when no
 * token is presented or the expected one is empty (two empty strings never match).
 */
export function tokenMatches(header: string | undefined, expected: string): boolean {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  if (!m?.[1] || expected.length === 0) return false;
  const given = Buffer.from(m[1], 'utf8');
  const want = Buffer.from(expected, 'utf8');
  // Compare equal lengths only (timingSafeEqual's rule); a length mismatch still costs one compare.
  const same = given.length === want.length;
  return timingSafeEqual(same ? given : want, want) && same;
}

/**
 * The `Host` values a plugin listening on `host:port` answers to: loopback names with its port
 * (`127.0.0.1`, `localhost`, `[::1]`, and the bind host), without the port too when it is 80.
 * Anything else is a DNS-rebinding attempt (a name of the attacker's resolved to loopback).
 */
export function allowedPluginHosts(host: string, port: number): Set<string> {
  const bind = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  const names = ['127.0.0.1', 'localhost', '[::1]', bind.toLowerCase()];
  return new Set(names.flatMap((n) => (port === 80 ? [`${n}:${port}`, n] : [`${n}:${port}`])));
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const checkOpen = TypeCompiler.Compile(OpenChannelBody);
const checkSend = TypeCompiler.Compile(SendMessageBody);
const checkPoll = TypeCompiler.Compile(PollQuery);

function firstError(check: ReturnType<typeof TypeCompiler.Compile>, value: unknown): string {
  const e = check.Errors(value).First();
  return e ? `${e.path || 'body'}: ${e.message}` : 'invalid body';
}

const describe = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** The plugin's view of a channel. */
export function pluginChannel(c: SecureChannelInfo): PluginChannel {
  return {
    channel_id: c.channel_id,
    peer_hub_address: c.peer_hub_address,
    role: c.role,
    protocol: c.protocol,
    status: c.open ? 'open' : c.status === 'active' ? 'approved' : c.status,
    created_at: c.created_at,
  };
}

/** A decrypted message as the inbox holds it (a room message by its room, not its pairwise conversation). */
export function pluginMessage(m: SecureMessage | SecureChannelMessage): PluginMessage {
  const channel = 'channel_id' in m ? m : undefined;
  const roomId = channel ? undefined : m.room_id;
  const content = m.content;
  return {
    message_id: m.message_id,
    channel_id: channel?.channel_id ?? null,
    conversation_id: channel || roomId !== undefined ? null : m.conversation_id,
    room_id: roomId ?? null,
    sender_device_id: m.sender_device_id,
    sender_hub_address: channel?.peer_hub_address ?? null,
    text: content?.type === 'text' ? content.payload.text : null,
    content_type: content?.type ?? null,
    content: content ?? null,
    message_type: m.message_type,
    protocol: m.protocol === 'mls' ? 'mls' : 'ratchet',
    timestamp: m.timestamp,
    traceparent: channel?.traceparent ?? null,
  };
}

/** Map a failure of the agent or the service to an HTTP error. */
function asHttpError(err: unknown): HttpError {
  if (err instanceof HttpError) return err;
  if (err instanceof ParleyApiError) {
    const status = [400, 403, 404, 409].includes(err.status) ? err.status : 502;
    return new HttpError(status, `the service answered ${err.status}: ${err.detail}`);
  }
  if (err instanceof ParleyNetworkError) return new HttpError(502, `cannot reach the service: ${err.message}`);
  if (err instanceof RealtimeError && err.code === 'server' && err.status !== undefined) {
    return new HttpError([400, 403, 404, 409].includes(err.status) ? err.status : 502, `the service answered ${err.status}: ${err.message}`);
  }
  if (err instanceof SecureMessengerError) {
    const cause = err.cause;
    if (cause instanceof ParleyApiError || cause instanceof ParleyNetworkError || cause instanceof RealtimeError) {
      const inner = asHttpError(cause);
      return new HttpError(inner.status, `${err.message}`);
    }
    if (err.code === 'unknown_conversation') return new HttpError(404, err.message);
    if (err.code === 'send_failed') return new HttpError(/not open|pending|approved|rejected|revoked|key exchange/.test(err.message) && !cause ? 409 : 502, err.message);
    return new HttpError(502, err.message);
  }
  return new HttpError(502, describe(err));
}

/**
 * Start the plugin of a running agent (see the file comment): creates the token when missing,
 * opens the inbox and feeds it from the agent's messenger and channels, and listens.
 * @throws when the port is taken (EADDRINUSE) or the state directory cannot be written.
 */
export async function startPlugin(options: StartPluginOptions): Promise<RunningPlugin> {
  const { backend, stateDir } = options;
  const log = options.log ?? (() => undefined);
  const host = options.host ?? '127.0.0.1';
  const token = await ensurePluginToken(stateDir);
  // One store per directory: the sealed manifest of the agent's store must see the inbox's writes.
  const store = backend.store?.dir === path.resolve(stateDir) ? backend.store : await openAgentStore(stateDir, options);
  const inbox = await PluginInbox.open(store, options.inboxLimit);
  const startedAt = new Date().toISOString();

  const record = (m: SecureMessage | SecureChannelMessage) => inbox.add(pluginMessage(m)).catch((err: unknown) => log(`warning: saving the plugin inbox failed: ${describe(err)}`));
  const offs = [
    backend.messenger.on('message', (m) => (backend.channels.get(m.conversation_id) ? undefined : record(m))),
    backend.channels.on('message', (m) => (isA2aFrame(m.plaintext) ? undefined : record(m))),
  ];
  const recorder = createA2aRecorder({ client: backend.client, log });
  const a2aProxy = createA2aProxy({ channels: backend.channels, log, recorder, ...options.a2a });
  offs.push(() => a2aProxy.close());
  const checkCard = cardGate(backend.server);
  offs.push(options.a2aUpstream ? serveA2aUpstream({ channels: backend.channels, upstream: options.a2aUpstream, log, recorder }) : refuseA2aCalls(backend.channels, log, recorder));

  const status = (): PluginStatus => ({
    device_id: backend.deviceId,
    hub_address: backend.hubAddress(),
    server: backend.server,
    auth: backend.auth,
    connected: backend.realtime.state === 'open',
    mls: backend.mls,
    channels: backend.channels.list().length,
    inbox: inbox.size,
    started_at: startedAt,
  });

  async function openChannel(body: OpenChannelBody): Promise<{ status: number; body: PluginChannel }> {
    const existing = backend.channels.findByPeer(body.peer);
    let channel = existing;
    if (!channel) {
      try {
        channel = await backend.channels.request(body.peer, { ...(body.protocol ? { protocol: body.protocol } : {}), ...(body.capability ? { capability: body.capability } : {}) });
      } catch (err) {
        // An open channel the service knows but this device lost track of is a 409 there.
        if (err instanceof ParleyApiError && err.status === 409) {
          await backend.channels.sync().catch(() => undefined);
          channel = backend.channels.findByPeer(body.peer);
        }
        if (!channel) throw err;
      }
    }
    if (body.wait_ms) channel = (await backend.channels.waitOpen(channel.channel_id, body.wait_ms)) ?? channel;
    return { status: existing ? 200 : 201, body: pluginChannel(channel) };
  }

  /**
   * Send `text` in owner conversations, in order; the answer names the first copy and lists the
   * copies sent. A conversation the service refuses (its owner device removed) is skipped; when
   * every one is refused, the first failure is thrown.
   */
  async function sendToOwner(conversationIds: string[], text: string, messageType: MessageType | undefined): Promise<PluginSendResult> {
    const sent = [];
    let failure: unknown;
    for (const id of conversationIds) {
      try {
        sent.push(await backend.messenger.sendText(id, text, messageType ? { message_type: messageType } : {}));
      } catch (err) {
        failure ??= err;
        log(`warning: sending to owner conversation ${id} failed: ${describe(err)}`);
      }
    }
    const first = sent[0];
    if (!first) throw failure;
    return {
      message_id: first.message_id,
      channel_id: null,
      conversation_id: first.conversation_id,
      room_id: null,
      outcome: 'delivered',
      protocol: first.protocol === 'mls' ? 'mls' : 'ratchet',
      timestamp: first.timestamp ?? new Date().toISOString(),
      copies: sent.map((m) => ({ conversation_id: m.conversation_id, message_id: m.message_id })),
    };
  }

  /** The answer of a room message: the recipients' common outcome (or `mixed`) and each one's. */
  function roomResult(sent: RoomSendReceipt): PluginSendResult {
    const outcomes = [...new Set(sent.deliveries.map((d) => d.outcome))];
    return {
      message_id: sent.room_message_id,
      channel_id: null,
      conversation_id: null,
      room_id: sent.room_id,
      outcome: outcomes.length === 1 ? outcomes[0]! : 'mixed',
      protocol: 'ratchet',
      timestamp: sent.timestamp,
      deliveries: sent.deliveries.map((d) => ({ recipient_device_id: d.recipient_device_id, outcome: d.outcome })),
    };
  }

  async function send(body: SendMessageBody): Promise<PluginSendResult> {
    const targets = [body.channel_id, body.hub_address, body.conversation_id, body.room_id].filter((x) => x !== undefined);
    if (targets.length > 1) throw new HttpError(400, 'name at most one of channel_id, hub_address, conversation_id or room_id (none: the owner)');
    const messageType = body.message_type as MessageType | undefined;
    const owned = backend.ownerConversations();
    if (targets.length === 0) {
      if (owned.length === 0) throw new HttpError(409, "this agent has no owner conversation yet: its owner has no ACTIVE owner device; name a channel, conversation or room");
      return sendToOwner(owned, body.text, messageType);
    }
    if (body.conversation_id !== undefined) {
      if (!owned.includes(body.conversation_id)) {
        throw new HttpError(404, `unknown conversation ${body.conversation_id}: this agent's owner conversations are ${owned.join(', ') || 'none'}`);
      }
      return sendToOwner([body.conversation_id], body.text, messageType);
    }
    if (body.room_id !== undefined) return roomResult(await backend.rooms.sendText(body.room_id.toLowerCase(), body.text, messageType ? { message_type: messageType } : {}));
    let channel: SecureChannelInfo | undefined;
    if (body.channel_id !== undefined) {
      channel = backend.channels.get(body.channel_id);
      if (!channel) throw new HttpError(404, `unknown channel ${body.channel_id}`);
    } else {
      const address = normalizeHubAddress(body.hub_address!);
      channel = backend.channels.findByPeer(address);
      if (!channel) throw new HttpError(404, `no channel with ${address}: open one with POST /v1/channels`);
    }
    const why = backend.channels.notOpenReason(channel.channel_id);
    if (why) throw new HttpError(409, why);
    const sent = await backend.channels.sendText(channel.channel_id, body.text, {
      ...(messageType ? { message_type: messageType } : {}),
      ...(body.traceparent !== undefined ? { traceparent: body.traceparent } : {}),
    });
    return { message_id: sent.message_id, channel_id: sent.channel_id, conversation_id: null, outcome: sent.outcome, protocol: sent.protocol, timestamp: sent.timestamp };
  }

  /** `/a2a/{hub_address}` routes (A2A over Parley); false when `url` is not one. */
  async function routeA2a(req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean> {
    const m = /^\/a2a\/([^/]+)(\/\.well-known\/agent-card\.json)?\/?$/.exec(url.pathname);
    if (!m) return false;
    const address = decodeURIComponent(m[1]!).toLowerCase();
    const endpoint = `${pluginUrl}/a2a/${m[1]!}`;
    if (m[2] && req.method === 'GET') {
      try {
        reply(res, 200, await remoteAgentCard(backend.server, address, endpoint));
      } catch (err) {
        reply(res, err instanceof RemoteCardError ? err.status : 502, { detail: describe(err) });
      }
    } else if (!m[2] && req.method === 'POST') {
      let body: unknown;
      try {
        body = await readJson(req);
      } catch (err) {
        reply(res, 200, jsonRpcError(null, { code: -32700, message: `Parse error: ${describe(err)}` }));
        return true;
      }
      const refusal = await checkCard(address);
      if (refusal) reply(res, 200, jsonRpcError((body as { id?: unknown } | null)?.id, refusal.toJsonRpc()));
      else await a2aProxy.call(address, body, req.headers, res);
    } else reply(res, 405, { detail: `${req.method} is not allowed on ${url.pathname}` });
    return true;
  }

  async function route(req: IncomingMessage, url: URL): Promise<{ status: number; body: unknown }> {
    const key = `${req.method} ${url.pathname.replace(/\/+$/, '')}`;
    switch (key) {
      case 'GET /v1/status':
        return { status: 200, body: status() };
      case 'GET /v1/channels':
        return { status: 200, body: { channels: backend.channels.list().map(pluginChannel) } };
      case 'POST /v1/channels': {
        const body = await readJson(req);
        if (!checkOpen.Check(body)) throw new HttpError(400, firstError(checkOpen, body));
        return openChannel(body);
      }
      case 'POST /v1/messages': {
        const body = await readJson(req);
        if (!checkSend.Check(body)) throw new HttpError(400, firstError(checkSend, body));
        return { status: 201, body: await send(body) };
      }
      case 'GET /v1/messages': {
        const q: Record<string, unknown> = Object.fromEntries(url.searchParams);
        if (typeof q.limit === 'string') q.limit = /^\d{1,6}$/.test(q.limit) ? Number(q.limit) : q.limit;
        if (!checkPoll.Check(q)) throw new HttpError(400, firstError(checkPoll, q));
        let since;
        try {
          since = parseSince(q.since);
        } catch (err) {
          throw new HttpError(400, describe(err));
        }
        return {
          status: 200,
          body: inbox.page({
            ...(since ? { since } : {}),
            ...(q.limit !== undefined ? { limit: q.limit } : {}),
            ...(q.channel_id !== undefined ? { channel_id: q.channel_id } : {}),
            ...(q.conversation_id !== undefined ? { conversation_id: q.conversation_id } : {}),
            ...(q.room_id !== undefined ? { room_id: q.room_id.toLowerCase() } : {}),
          }),
        };
      }
    }
    if (['/v1/status', '/v1/channels', '/v1/messages'].includes(url.pathname.replace(/\/+$/, ''))) throw new HttpError(405, `${req.method} is not allowed on ${url.pathname}`);
    throw new HttpError(404, `no route ${req.method} ${url.pathname}`);
  }

  let port = 0;
  let pluginUrl = '';
  let allowedHosts = new Set<string>();
  const server: Server = createServer((req, res) => {
    void (async () => {
      if (!isLoopbackAddress(req.socket.remoteAddress)) return reply(res, 403, { detail: 'the plugin only serves loopback clients' });
      const hostHeader = (req.headers.host ?? '').toLowerCase();
      if (!allowedHosts.has(hostHeader)) {
        return reply(res, 403, { detail: `the plugin only answers requests addressed to a loopback name with port ${port} (Host ${JSON.stringify(req.headers.host ?? '')} refused)` });
      }
      if (!tokenMatches(req.headers.authorization, token)) return reply(res, 401, { detail: `missing or wrong bearer token: send Authorization: Bearer <contents of ${path.join(stateDir, PLUGIN_TOKEN_FILE)}>` });
      try {
        const target = new URL(req.url ?? '/', 'http://plugin');
        if (await routeA2a(req, res, target)) return;
        const out = await route(req, target);
        reply(res, out.status, out.body);
      } catch (err) {
        const e = asHttpError(err);
        reply(res, e.status, { detail: e.message });
      }
    })().catch(() => reply(res, 500, { detail: 'internal error' }));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? DEFAULT_PLUGIN_PORT, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  port = (server.address() as AddressInfo).port;
  allowedHosts = allowedPluginHosts(host, port);
  const shown = host.includes(':') ? `[${host}]` : host;
  const url = `http://${host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '[::1]' : shown}:${port}`;
  pluginUrl = url;
  const infoFile = path.join(stateDir, PLUGIN_INFO_FILE);
  await writeFileAtomic(infoFile, JSON.stringify({ url, host, port, pid: process.pid, device_id: backend.deviceId, started_at: startedAt }));
  log(`plugin listening on ${url} (token in ${path.join(stateDir, PLUGIN_TOKEN_FILE)})`);

  let closed: Promise<void> | undefined;
  return {
    url,
    port,
    host,
    token,
    inbox,
    close() {
      closed ??= (async () => {
        for (const off of offs) off();
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
        await inbox.flush().catch(() => undefined);
        // The last calls' spans and audit entries, unless the service is gone.
        await Promise.race([recorder.flush(), new Promise((resolve) => setTimeout(resolve, 2000).unref())]);
        await rm(infoFile, { force: true });
      })();
      return closed;
    },
  };
}

function reply(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent) return;
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store' });
  res.end(text);
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) throw new HttpError(400, `body larger than ${MAX_BODY} bytes`);
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') throw new HttpError(400, 'a JSON body is required');
  try {
    return JSON.parse(text);
  } catch {
    throw new HttpError(400, 'the body is not valid JSON');
  }
}

/**
 * The calling side of A2A over Parley, served by the local plugin: `POST {plugin}/a2a/{hub_address}`
 * takes a JSON-RPC request of the A2A 1.0 JSON-RPC binding (as the official `@a2a-js/sdk` client
 * sends it: `SendMessage`, `SendStreamingMessage`, `GetTask`, `CancelTask`, …), carries it as a
 * `req` frame (`a2a-tunnel.ts`) over the end-to-end encrypted A2A channel with that hub identity
 * (requested on first use) and answers with what the remote agent's A2A server answered: a JSON-RPC
 * response, or an SSE stream (`text/event-stream`) whose events arrive in order. When the caller
 * goes away mid-stream an `abort` frame aborts the remote upstream request.
 *
 * Failures Parley itself causes are JSON-RPC error responses (HTTP 200) naming the cause
 * (`a2a-errors.ts`): the channel request refused (tier, agreement, policy), the channel pending
 * approval, rejected or revoked, a message held or blocked by policy, no answer in time (peer
 * offline, with `retry_after_ms`), the remote upstream down.
 */
import type { ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import { ParleyApiError, ParleyNetworkError } from '../client/errors.js';
import { normalizeHubAddress, type SecureChannelInfo, type SecureChannels } from '../secure/a2a.js';
import { SecureMessengerError } from '../secure/types.js';
import { parseTraceparent, startSpan } from '../telemetry/spans.js';
import { A2A_FORWARDED_HEADERS, decodeA2aFrame, encodeA2aFrame, type A2aFrame } from './a2a-tunnel.js';
import { A2aParleyError, jsonRpcError } from './a2a-errors.js';
import type { A2aCallRecord, A2aOutcome, A2aRecorder } from './a2a-record.js';

/** Options of {@link createA2aProxy}. */
export interface A2aProxyOptions {
  channels: SecureChannels;
  /** How long to wait for the first answer frame (ms, default 30000). */
  answerTimeoutMs?: number;
  /** How long to wait for an approved channel's key exchange to complete (ms, default 5000). */
  openTimeoutMs?: number;
  log?: (line: string) => void;
  /** Records each call's `svc.task` span and audit entry (`a2a-record.ts`); none when absent. */
  recorder?: A2aRecorder;
}

/** A running proxy: call it per request; `close()` stops listening and fails calls in flight. */
export interface A2aProxy {
  /**
   * Answer one JSON-RPC request to `hubAddress` on `res` (JSON, or SSE when the remote streams).
   * `headers` are the caller's request headers (lowercase names).
   */
  call(hubAddress: string, body: unknown, headers: Record<string, string | string[] | undefined>, res: ServerResponse): Promise<void>;
  close(): void;
}

const describe = (err: unknown) => (err instanceof Error ? err.message : String(err));
/** Frames of one call, consumed in arrival order. */
class FrameQueue {
  private readonly frames: A2aFrame[] = [];
  private waiter: ((f: A2aFrame | undefined) => void) | undefined;

  push(frame: A2aFrame | undefined): void {
    if (this.waiter) {
      const w = this.waiter;
      this.waiter = undefined;
      w(frame);
    } else if (frame) this.frames.push(frame);
  }

  /** The next frame, or undefined after `timeoutMs` (or when failed with `push(undefined)`). */
  next(timeoutMs: number): Promise<A2aFrame | undefined> {
    const ready = this.frames.shift();
    if (ready) return Promise.resolve(ready);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiter = undefined;
        resolve(undefined);
      }, timeoutMs);
      this.waiter = (f) => {
        clearTimeout(timer);
        resolve(f);
      };
    });
  }
}

/** The error naming why a channel refusal or a failed send happened. */
function parleyFailure(err: unknown, peer: string): A2aParleyError {
  const api = err instanceof SecureMessengerError && err.cause instanceof ParleyApiError ? err.cause : err instanceof ParleyApiError ? err : undefined;
  if (api) {
    if (api.status === 404) return new A2aParleyError('unknown_peer', `no hub identity ${peer}: ${api.detail}`);
    if (api.status === 403 && /tier|trust score|floor/i.test(api.detail)) return new A2aParleyError('tier_below_floor', `Parley refused the A2A call to ${peer}: ${api.detail}`);
    if (api.status === 403 || api.status === 409) return new A2aParleyError('policy_blocked', `Parley refused the A2A call to ${peer}: ${api.detail}`);
    return new A2aParleyError('service_unavailable', `the Parley service answered ${api.status}: ${api.detail}`);
  }
  if (err instanceof ParleyNetworkError || (err instanceof SecureMessengerError && err.cause instanceof ParleyNetworkError)) {
    return new A2aParleyError('service_unavailable', `cannot reach the Parley service: ${describe(err)}`, { retry_after_ms: 5000 });
  }
  return new A2aParleyError('service_unavailable', describe(err));
}

/** Create the calling side (see the file comment). */
export function createA2aProxy(options: A2aProxyOptions): A2aProxy {
  const { channels } = options;
  const answerTimeoutMs = options.answerTimeoutMs ?? 30_000;
  const openTimeoutMs = options.openTimeoutMs ?? 5_000;
  const calls = new Map<string, FrameQueue>();

  const off = channels.on('message', (m) => {
    const frame = decodeA2aFrame(m.plaintext);
    if (frame && frame.k !== 'req' && frame.k !== 'abort') calls.get(`${m.channel_id}/${frame.id}`)?.push(frame);
  });

  /** The open channel with `peer`, requested on first use. @throws A2aParleyError */
  async function openChannel(peer: string): Promise<SecureChannelInfo> {
    let channel = channels.findByPeer(peer);
    if (!channel) {
      try {
        channel = await channels.request(peer);
      } catch (err) {
        if (err instanceof ParleyApiError && err.status === 409) {
          await channels.sync().catch(() => undefined);
          channel = channels.findByPeer(peer);
        }
        if (!channel) throw parleyFailure(err, peer);
      }
    }
    if (channel.open) return channel;
    const id = channel.channel_id;
    if (channel.status === 'pending') {
      throw new A2aParleyError('channel_pending', `the A2A channel ${id} with ${peer} is pending: the owner of ${peer} must approve it before calls go through`, { channel_id: id });
    }
    if (channel.status === 'rejected' || channel.status === 'revoked') throw new A2aParleyError('channel_closed', `the A2A channel ${id} with ${peer} was ${channel.status}`, { channel_id: id });
    const opened = await channels.waitOpen(id, openTimeoutMs);
    if (opened?.open) return opened;
    throw new A2aParleyError('peer_offline', `${peer} is offline: the end-to-end key exchange of channel ${id} needs both agents online; retry later`, { channel_id: id, retry_after_ms: 5000 });
  }

  /**
   * Answer one call on `res`; resolves to how it ended. `record` names the channel and carries the
   * trace context handed on.
   */
  async function call(peer: string, rpc: Record<string, unknown>, headers: Record<string, string | string[] | undefined>, res: ServerResponse, record: A2aCallRecord | undefined): Promise<A2aOutcome> {
    const fail = (err: A2aParleyError): A2aOutcome => {
      json(res, jsonRpcError(rpc.id, err.toJsonRpc()));
      return err.parleyCause;
    };
    let channel: SecureChannelInfo;
    try {
      channel = await openChannel(peer);
    } catch (err) {
      return fail(err instanceof A2aParleyError ? err : parleyFailure(err, peer));
    }
    record?.channel(channel.channel_id);
    const id = randomUUID();
    const key = `${channel.channel_id}/${id}`;
    const queue = new FrameQueue();
    calls.set(key, queue);
    const traceparent = record?.span.traceparent ?? traceparentFor(headers.traceparent);
    const forwarded: Record<string, string> = {};
    for (const h of A2A_FORWARDED_HEADERS) {
      const v = headers[h];
      if (typeof v === 'string') forwarded[h] = v;
    }
    const send = (frame: A2aFrame) => channels.sendPlaintext(channel.channel_id, encodeA2aFrame(frame), { traceparent });
    let finished = false;
    let aborted = false;
    res.on('close', () => {
      if (finished) return;
      aborted = true;
      void send({ k: 'abort', id }).catch(() => undefined);
    });
    try {
      let sent;
      try {
        sent = await send({ k: 'req', id, body: rpc, headers: forwarded });
      } catch (err) {
        return fail(parleyFailure(err, peer));
      }
      if (sent.outcome === 'held') return fail(new A2aParleyError('policy_held', `a policy holds the A2A call to ${peer} for an owner's approval (held message ${sent.held_message_id ?? sent.message_id}); retry once it is approved`, { channel_id: channel.channel_id }));
      if (sent.outcome === 'blocked') return fail(new A2aParleyError('policy_blocked', `a policy blocked the A2A call to ${peer}`, { channel_id: channel.channel_id }));
      const first = await queue.next(answerTimeoutMs);
      if (!first) {
        void send({ k: 'abort', id }).catch(() => undefined);
        return fail(new A2aParleyError('peer_offline', `${peer} did not answer within ${answerTimeoutMs} ms (offline, or not running with --a2a-upstream); retry later`, { channel_id: channel.channel_id, retry_after_ms: 5000 }));
      }
      if (first.k === 'err') return fail(new A2aParleyError('upstream_down', `${peer}: ${first.message}`, { channel_id: channel.channel_id }));
      if (first.k === 'res') {
        json(res, first.body);
        return rpcOutcome(first.body);
      }
      if (first.k !== 'open') return fail(new A2aParleyError('upstream_down', `${peer} answered out of order (${first.k})`));
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
      res.flushHeaders();
      let ended: A2aOutcome = 'peer_offline';
      for (;;) {
        const frame = await queue.next(answerTimeoutMs);
        if (!frame || frame.k === 'end' || frame.k === 'err') {
          if (frame) ended = frame.k === 'end' ? 'streamed' : 'upstream_down';
          break;
        }
        if (frame.k === 'ev') res.write(`${frame.event}\n\n`);
      }
      res.end();
      return aborted ? 'aborted' : ended;
    } finally {
      finished = true;
      calls.delete(key);
    }
  }

  /** Check the request, record it and answer it (see the file comment). */
  async function serve(hubAddress: string, body: unknown, headers: Record<string, string | string[] | undefined>, res: ServerResponse): Promise<void> {
    const rpcId = typeof body === 'object' && body !== null ? (body as Record<string, unknown>).id : undefined;
    const rpc = body as Record<string, unknown> | null;
    if (typeof rpc !== 'object' || rpc === null || Array.isArray(rpc) || rpc.jsonrpc !== '2.0' || typeof rpc.method !== 'string') {
      return json(res, jsonRpcError(rpcId, { code: -32600, message: 'Invalid Request: expected a JSON-RPC 2.0 request object with a method' }));
    }
    let peer: string;
    try {
      peer = normalizeHubAddress(hubAddress);
    } catch (err) {
      return json(res, jsonRpcError(rpcId, { code: -32602, message: `not a hub address: ${describe(err)}` }));
    }
    const record = options.recorder?.start('caller', { peer, method: rpc.method, traceparent: headers.traceparent });
    let outcome: A2aOutcome = 'internal_error';
    try {
      outcome = await call(peer, rpc, headers, res, record);
    } finally {
      record?.finish(outcome);
    }
  }

  return {
    call: (hubAddress, body, headers, res) =>
      serve(hubAddress, body, headers, res).catch((err: unknown) => {
        options.log?.(`warning: a2a call to ${hubAddress} failed: ${describe(err)}`);
        if (!res.headersSent) json(res, jsonRpcError(undefined, { code: -32603, message: `internal error: ${describe(err)}` }));
        else res.end();
      }),
    close() {
      off();
      for (const q of calls.values()) q.push(undefined);
    },
  };
}

/** A W3C Trace Context `traceparent` (W3C Recommendation "Trace Context" §3.2): the caller's when well formed, or a new one. */
export function traceparentFor(given: string | string[] | undefined): string {
  const parent = parseTraceparent(given);
  return parent ? `00-${parent.traceId}-${parent.parentSpanId}-01` : startSpan('a2a').traceparent;
}

/** `rpc_error` when a JSON-RPC answer is an error response, else `answered`. */
export function rpcOutcome(body: unknown): A2aOutcome {
  return typeof body === 'object' && body !== null && 'error' in body ? 'rpc_error' : 'answered';
}

function json(res: ServerResponse, body: unknown): void {
  if (res.headersSent) return;
  const text = JSON.stringify(body);
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store' });
  res.end(text);
}

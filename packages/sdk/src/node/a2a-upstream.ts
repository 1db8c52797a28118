/**
 * The answering side of A2A over Parley (`parley-agent run --a2a-upstream URL`): `req` frames
 * (`a2a-tunnel.ts`) that arrive on the agent's end-to-end encrypted A2A channels are POSTed,
 * unchanged, to the agent's own A2A JSON-RPC endpoint on loopback (A2A protocol 1.0, JSON-RPC
 * binding); a JSON answer goes back as one `res` frame, an SSE answer (`text/event-stream`, as for
 * `SendStreamingMessage`) as `open`, one `ev` frame per event in the order the upstream wrote
 * them, then `end`. An `abort` frame aborts the upstream request (the caller went away); task
 * cancellation itself is the caller's `CancelTask` call, forwarded like any other.
 */
import { isLoopbackUrl } from '@parley/protocol';
import type { SecureChannelMessage, SecureChannels } from '../secure/a2a.js';
import { rpcOutcome } from './a2a-proxy.js';
import type { A2aOutcome, A2aRecorder } from './a2a-record.js';
import { A2A_FORWARDED_HEADERS, decodeA2aFrame, encodeA2aFrame, type A2aFrame } from './a2a-tunnel.js';

/** Options of {@link serveA2aUpstream}. */
export interface A2aUpstreamOptions {
  channels: SecureChannels;
  /** The agent's own A2A JSON-RPC endpoint (a loopback http(s) URL). */
  upstream: string;
  log?: (line: string) => void;
  /** Default: the global fetch. */
  fetch?: typeof fetch;
  /** Records each call's `svc.task` span and audit entry (`a2a-record.ts`); none when absent. */
  recorder?: A2aRecorder;
}

const describe = (err: unknown) => (err instanceof Error ? err.message : String(err));

/**
 * Check an `--a2a-upstream` value: an http(s) URL on a loopback host.
 * @throws Error naming what is wrong.
 */
export function checkA2aUpstream(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`--a2a-upstream ${JSON.stringify(url)} is not a URL`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error(`--a2a-upstream must be an http(s) URL, not ${parsed.protocol}`);
  if (!isLoopbackUrl(url)) throw new Error(`--a2a-upstream must be on loopback (127.0.0.1, ::1 or localhost): A2A plaintext stays on this machine`);
  return url;
}

/** Split an SSE byte stream into event blocks (WHATWG HTML "server-sent events": events end with a blank line). */
async function* sseEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true }).replace(/\r\n?/g, '\n');
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      if (block.trim() !== '') yield block;
    }
  }
  if (buffer.trim() !== '') yield buffer;
}

/**
 * Serve incoming A2A calls from `upstream` (see the file comment). Returns a function that stops
 * listening and aborts the calls in flight.
 */
export function serveA2aUpstream(options: A2aUpstreamOptions): () => void {
  const log = options.log ?? (() => undefined);
  const doFetch = options.fetch ?? fetch;
  const inFlight = new Map<string, AbortController>();

  const send = (channelId: string, frame: A2aFrame, traceparent: string | null) =>
    options.channels.sendPlaintext(channelId, encodeA2aFrame(frame), traceparent ? { traceparent } : {}).catch((err: unknown) => log(`warning: a2a answer on channel ${channelId} not sent: ${describe(err)}`));

  /** Answer one `req` frame from the upstream; resolves to how it ended. */
  async function answer(m: SecureChannelMessage, frame: Extract<A2aFrame, { k: 'req' }>, traceparent: string | null, abort: AbortController): Promise<A2aOutcome> {
    const reply = (f: A2aFrame) => send(m.channel_id, f, traceparent);
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    for (const h of A2A_FORWARDED_HEADERS) if (typeof frame.headers?.[h] === 'string') headers[h] = frame.headers[h];
    if (traceparent) headers.traceparent = traceparent;
    let res: Response;
    try {
      res = await doFetch(options.upstream, { method: 'POST', headers, body: JSON.stringify(frame.body), signal: abort.signal });
    } catch (err) {
      if (abort.signal.aborted) return 'aborted';
      await reply({ k: 'err', id: frame.id, cause: 'upstream_down', message: `the agent's A2A server at ${options.upstream} is not reachable: ${describe(err)}` });
      return 'upstream_down';
    }
    if ((res.headers.get('content-type') ?? '').startsWith('text/event-stream') && res.body) {
      await reply({ k: 'open', id: frame.id });
      let outcome: A2aOutcome = 'streamed';
      try {
        for await (const event of sseEvents(res.body)) await reply({ k: 'ev', id: frame.id, event });
      } catch (err) {
        outcome = abort.signal.aborted ? 'aborted' : 'upstream_down';
        if (!abort.signal.aborted) log(`warning: a2a stream from ${options.upstream} broke: ${describe(err)}`);
      }
      await reply({ k: 'end', id: frame.id });
      return outcome;
    }
    const text = await res.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      await reply({ k: 'err', id: frame.id, cause: 'upstream_down', message: `the agent's A2A server answered HTTP ${res.status} without a JSON-RPC body` });
      return 'upstream_down';
    }
    await reply({ k: 'res', id: frame.id, body });
    return rpcOutcome(body);
  }

  /** Record and answer one call (see the file comment). */
  async function serve(m: SecureChannelMessage, frame: Extract<A2aFrame, { k: 'req' }>): Promise<void> {
    const key = `${m.channel_id}/${frame.id}`;
    const abort = new AbortController();
    inFlight.set(key, abort);
    const record = options.recorder?.start('answerer', { peer: m.peer_hub_address, method: rpcMethod(frame.body), traceparent: m.traceparent, channelId: m.channel_id });
    let outcome: A2aOutcome = 'internal_error';
    try {
      outcome = await answer(m, frame, record?.span.traceparent ?? m.traceparent, abort);
    } finally {
      inFlight.delete(key);
      record?.finish(outcome);
    }
  }

  const off = options.channels.on('message', (m) => {
    const frame = decodeA2aFrame(m.plaintext);
    if (!frame) return;
    if (frame.k === 'req') void serve(m, frame).catch((err: unknown) => log(`warning: a2a call failed: ${describe(err)}`));
    else if (frame.k === 'abort') inFlight.get(`${m.channel_id}/${frame.id}`)?.abort();
  });
  return () => {
    off();
    for (const c of inFlight.values()) c.abort();
  };
}

/** The JSON-RPC method of a request body (`unknown` when it has none). */
function rpcMethod(body: unknown): string {
  const method = typeof body === 'object' && body !== null ? (body as Record<string, unknown>).method : undefined;
  return typeof method === 'string' ? method.slice(0, 100) : 'unknown';
}

/**
 * Answer every incoming A2A call with `err no_upstream` (an agent run without `--a2a-upstream`),
 * so its callers learn at once instead of waiting for a timeout. Returns the function that stops it.
 */
export function refuseA2aCalls(channels: SecureChannels, log: (line: string) => void = () => undefined, recorder?: A2aRecorder): () => void {
  return channels.on('message', (m) => {
    const frame = decodeA2aFrame(m.plaintext);
    if (frame?.k !== 'req') return;
    recorder?.start('answerer', { peer: m.peer_hub_address, method: rpcMethod(frame.body), traceparent: m.traceparent, channelId: m.channel_id }).finish('no_upstream');
    const refusal: A2aFrame = { k: 'err', id: frame.id, cause: 'no_upstream', message: 'this agent serves no A2A upstream (run it with parley-agent run --a2a-upstream URL)' };
    void channels.sendPlaintext(m.channel_id, encodeA2aFrame(refusal), m.traceparent ? { traceparent: m.traceparent } : {}).catch((err: unknown) => log(`warning: a2a refusal not sent: ${describe(err)}`));
  });
}

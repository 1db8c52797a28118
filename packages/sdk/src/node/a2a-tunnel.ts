/**
 * The frames that carry A2A JSON-RPC (A2A protocol 1.0, JSON-RPC binding; a2aproject/A2A) inside
 * an end-to-end encrypted Parley A2A channel (`secure/a2a.ts`). A frame is the plaintext of one
 * channel message: the UTF-8 prefix {@link A2A_FRAME_PREFIX} then one JSON object. The service
 * only relays the ciphertext; channel messages of one channel are sent and delivered in order, so
 * the frames of one call arrive in the order they were sent.
 *
 * | k       | direction        | fields                                                              |
 * |---------|------------------|---------------------------------------------------------------------|
 * | `req`   | caller → answerer| `id` (call id), `body` (the JSON-RPC request object, unchanged), `headers` (the A2A service parameters `A2A-Version`, `A2A-Extensions`, lowercase names) |
 * | `res`   | answerer → caller| `id`, `body` (the upstream's JSON-RPC response object)              |
 * | `open`  | answerer → caller| `id`: the upstream answered with an SSE stream; `ev` frames follow  |
 * | `ev`    | answerer → caller| `id`, `event` (one SSE event block as the upstream wrote it, without the blank line ending it) |
 * | `end`   | answerer → caller| `id`: the stream ended                                              |
 * | `err`   | answerer → caller| `id`, `cause` (`upstream_down` / `no_upstream`), `message` |
 * | `abort` | caller → answerer| `id`: the caller went away; the upstream request is aborted         |
 */

/** What a tunnel plaintext starts with (never a `{type, payload}` content envelope). */
export const A2A_FRAME_PREFIX = 'parley-a2a-rpc/v1\n';

/** The request headers carried to the upstream (A2A service parameters), lowercase. */
export const A2A_FORWARDED_HEADERS = ['a2a-version', 'a2a-extensions'] as const;

/** Why the answering side could not produce an answer. */
export type A2aTunnelCause = 'upstream_down' | 'no_upstream';

/** One tunnel frame (see the file comment). */
export type A2aFrame =
  | { k: 'req'; id: string; body: unknown; headers: Record<string, string> }
  | { k: 'res'; id: string; body: unknown }
  | { k: 'open'; id: string }
  | { k: 'ev'; id: string; event: string }
  | { k: 'end'; id: string }
  | { k: 'err'; id: string; cause: A2aTunnelCause; message: string }
  | { k: 'abort'; id: string };

const KINDS = new Set(['req', 'res', 'open', 'ev', 'end', 'err', 'abort']);
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Encode a frame as a channel plaintext. */
export function encodeA2aFrame(frame: A2aFrame): Uint8Array {
  return encoder.encode(A2A_FRAME_PREFIX + JSON.stringify(frame));
}

/** Decode a channel plaintext; undefined when it is not a tunnel frame (an ordinary message). */
export function decodeA2aFrame(plaintext: Uint8Array): A2aFrame | undefined {
  const text = decoder.decode(plaintext);
  if (!text.startsWith(A2A_FRAME_PREFIX)) return undefined;
  try {
    const frame = JSON.parse(text.slice(A2A_FRAME_PREFIX.length)) as A2aFrame;
    return typeof frame === 'object' && frame !== null && KINDS.has(frame.k) && typeof frame.id === 'string' ? frame : undefined;
  } catch {
    return undefined;
  }
}

/** True when a channel plaintext is a tunnel frame (kept out of the plugin inbox). */
export function isA2aFrame(plaintext: Uint8Array): boolean {
  return decodeA2aFrame(plaintext) !== undefined;
}

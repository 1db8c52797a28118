/**
 * The AsyncAPI 3.0 document of the WebSocket protocol (https://www.asyncapi.com/docs/reference/specification/v3.0.0),
 * generated from the frame catalogue (ws-frames.ts): one channel, the socket at `WS_PATH`; one
 * message per frame (`client.<event>`) and per event (`service.<event>`), each payload the
 * `{event, data}` envelope around the catalogue's TypeBox schema of `data`; one operation per
 * message. The document describes the service, so the frames clients send are its `receive`
 * operations (with their ack and `error` as `reply`) and the events it sends its `send` operations.
 * The socket's authentication (the `token` query parameter) is an `httpApiKey` security scheme
 * and the upgrade's query a `ws` channel binding (bindingVersion 0.1.0); the close codes are the
 * channel's `x-close-codes` extension and part of its description.
 */
import type { TSchema } from '@sinclair/typebox';
import { WS_PATH } from './contract.js';
import { WS_AUTH, WS_CLIENT_FRAMES, WS_CLOSE_CODES, WS_SERVICE_EVENTS, type WsClientFrame, type WsServiceEvent } from './ws-frames.js';

/** A JSON object of the document. */
type Json = Record<string, unknown>;

/** What the document needs of the deployment. */
export interface AsyncApiOptions {
  /** The service's version (`info.version`). */
  version: string;
  /** `PUBLIC_URL`: its host is the server's; `https:` becomes `wss`, `http:` `ws`. */
  publicUrl: string;
}

/** The channel id of the socket. */
export const ASYNCAPI_CHANNEL = 'socket';

/** The components.messages key of a client frame (`client.<event>`) or service event (`service.<event>`). */
export const asyncApiMessageKey = (from: 'client' | 'service', event: string) => `${from}.${event}`;

/** A plain JSON copy of a TypeBox schema (TypeBox's symbol keys dropped, `$id`s removed so copies can repeat). */
export function plainSchema(schema: TSchema): Json {
  const strip = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(strip);
    if (v === null || typeof v !== 'object') return v;
    return Object.fromEntries(Object.entries(v).filter(([k]) => k !== '$id').map(([k, x]) => [k, strip(x)]));
  };
  return strip(JSON.parse(JSON.stringify(schema))) as Json;
}

/** The `{event, data}` envelope of a frame as a JSON Schema; ack and error data also echo `client_ref`. */
function envelope(event: string, data: TSchema, echoesClientRef: boolean): Json {
  const body = plainSchema(data);
  const props = (body.properties ?? undefined) as Json | undefined;
  if (echoesClientRef && body.type === 'object' && props && !('client_ref' in props)) {
    props.client_ref = { type: 'string', description: "the answered frame's client_ref, when it had one" };
  }
  return {
    type: 'object',
    required: ['event', 'data'],
    properties: { event: { type: 'string', const: event }, data: body },
  };
}

const ref = (path: string) => ({ $ref: path });
const channelRef = ref(`#/channels/${ASYNCAPI_CHANNEL}`);
const channelMessageRef = (key: string) => ref(`#/channels/${ASYNCAPI_CHANNEL}/messages/${key}`);

function message(from: 'client' | 'service', event: string, doc: WsClientFrame | WsServiceEvent, echoesClientRef: boolean): Json {
  return {
    name: event,
    title: `${event} (${from === 'client' ? 'client → service' : 'service → client'})`,
    summary: doc.summary,
    description: doc.description,
    contentType: 'application/json',
    payload: envelope(event, doc.data, echoesClientRef),
  };
}

/** Markdown table of the close codes, for descriptions. */
export function closeCodesMarkdown(): string {
  return ['| code | meaning |', '|---|---|', ...WS_CLOSE_CODES.map((c) => `| ${c.code} | ${c.meaning} |`)].join('\n');
}

/**
 * Build the AsyncAPI 3.0.0 document of the WebSocket protocol.
 * @throws TypeError when `publicUrl` is not an absolute http(s) URL.
 */
export function buildAsyncApi(o: AsyncApiOptions): Json {
  // The protocol package has no URL global in its type environment (browser-safe, no DOM or Node types).
  const m = /^(https?):\/\/([^/?#]+)/i.exec(o.publicUrl);
  if (!m) throw new TypeError(`publicUrl must be an absolute http(s) URL: ${o.publicUrl}`);
  const url = { protocol: `${m[1]!.toLowerCase()}:`, host: m[2]!.toLowerCase() };
  const clientFrames = Object.entries(WS_CLIENT_FRAMES) as [string, WsClientFrame][];
  const serviceEvents = Object.entries(WS_SERVICE_EVENTS) as [string, WsServiceEvent][];
  const acks = new Set(clientFrames.flatMap(([, f]) => f.replies));
  const messages: Json = {};
  for (const [event, f] of clientFrames) messages[asyncApiMessageKey('client', event)] = message('client', event, f, false);
  for (const [event, e] of serviceEvents) messages[asyncApiMessageKey('service', event)] = message('service', event, e, acks.has(event as never) && event !== 'pong');

  const operations: Json = {};
  for (const [event, f] of clientFrames) {
    operations[`receive.${event}`] = {
      action: 'receive',
      channel: channelRef,
      summary: f.summary,
      description: f.description,
      messages: [channelMessageRef(asyncApiMessageKey('client', event))],
      ...(f.replies.length > 0 ? { reply: { channel: channelRef, messages: f.replies.map((r) => channelMessageRef(asyncApiMessageKey('service', r))) } } : {}),
    };
  }
  for (const [event, e] of serviceEvents) {
    operations[`send.${event}`] = { action: 'send', channel: channelRef, summary: e.summary, description: e.description, messages: [channelMessageRef(asyncApiMessageKey('service', event))] };
  }

  return {
    asyncapi: '3.0.0',
    id: `urn:parley:websocket:${url.host}`,
    info: {
      title: 'Parley WebSocket API',
      version: o.version,
      description: [
        'The real-time side of Parley: encrypted messages, receipts and lifecycle events over one WebSocket per device. Every frame is a JSON text message `{event, data}`; the service never sees plaintext (ciphertext and headers are opaque base64).',
        'This document describes the service: the frames clients send are its `receive` operations (their ack and `error` are the `reply`), the events it sends its `send` operations. The REST API is described by the OpenAPI document at `/api/v1/openapi.json`.',
      ].join('\n\n'),
    },
    defaultContentType: 'application/json',
    servers: {
      parley: {
        host: url.host,
        protocol: url.protocol === 'https:' ? 'wss' : 'ws',
        description: 'This deployment (`PUBLIC_URL`).',
        security: [ref('#/components/securitySchemes/token')],
      },
    },
    channels: {
      [ASYNCAPI_CHANNEL]: {
        address: WS_PATH,
        title: 'The device socket',
        description: `One socket per device (a device may hold several). **Connecting:** ${WS_AUTH.description}\n\n**Close codes**\n\n${closeCodesMarkdown()}`,
        servers: [ref('#/servers/parley')],
        messages: Object.fromEntries(Object.keys(messages).map((k) => [k, ref(`#/components/messages/${k}`)])),
        bindings: { ws: { method: 'GET', query: plainSchema(WS_AUTH.query), bindingVersion: '0.1.0' } },
        'x-close-codes': WS_CLOSE_CODES,
      },
    },
    operations,
    components: {
      messages,
      securitySchemes: {
        token: {
          type: 'httpApiKey',
          name: 'token',
          in: 'query',
          description: 'A device JWT, an owner JWT (with the `device_id` query parameter naming one of the caller\'s ACTIVE owner devices), or an API key `svc_agent_sk_{env}_{64 hex}`.',
        },
      },
    },
  };
}

/**
 * The tool server over Streamable HTTP (MCP transport spec 2025-06-18): `POST/GET/DELETE
 * /mcp` with sessions (`Mcp-Session-Id`; one MCP `Server` per session, sharing the tool runtime),
 * bound to 127.0.0.1 unless told otherwise. Against DNS rebinding, a request whose `Host` is not
 * one of this server's own names (127.0.0.1 / localhost / [::1] / the bound host, with its port) or
 * whose `Origin` (when sent) is not an allowed origin is refused with 403 before it reaches MCP.
 * Every request carries `Authorization: Bearer <token>` (401 otherwise, compared in constant time):
 * the tool server acts with the agent's credentials and reads its plugin's token, so another local
 * user must not reach it. At most {@link MAX_SESSIONS} sessions live at once (503 for a new one
 * beyond); a session idle for {@link SESSION_IDLE_MS} is closed.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { tokenMatches } from '@parley/sdk/node';
import { createMcpServer, type ToolRuntime } from './server.js';

/** Default port of `--http` (no port given). */
export const DEFAULT_HTTP_PORT = 8765;
/** The MCP endpoint path. */
export const MCP_PATH = '/mcp';

/** File (in the state directory) holding the generated bearer token of the HTTP mode. */
export const MCP_HTTP_TOKEN_FILE = 'mcp-http-token';

/** Most live sessions. */
export const MAX_SESSIONS = 64;
/** A session without requests for this long is closed (ms). */
export const SESSION_IDLE_MS = 30 * 60_000;

/** Options of {@link startHttpServer}. */
export interface HttpOptions {
  /** Port (0 = any free port). */
  port: number;
  /** The bearer token every request must carry. */
  token: string;
  /** Bind address (default 127.0.0.1). */
  host?: string;
  /** Extra allowed `Origin` values (e.g. a browser-based host's origin). */
  allowedOrigins?: string[];
}

/** A running HTTP tool server. */
export interface RunningHttpServer {
  /** `http://<host>:<port>/mcp`. */
  url: string;
  port: number;
  close(): Promise<void>;
}

function refuse(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > 4 * 1024 * 1024) throw new Error('request body over 4 MiB');
    chunks.push(chunk as Buffer);
  }
  return chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
}

/**
 * Serve `runtime` over Streamable HTTP.
 * @throws the listen error (e.g. EADDRINUSE).
 */
export async function startHttpServer(runtime: ToolRuntime, options: HttpOptions): Promise<RunningHttpServer> {
  const host = options.host ?? '127.0.0.1';
  if (!options.token) throw new Error('startHttpServer needs a bearer token');
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const lastSeen = new Map<string, number>();
  const sweep = setInterval(() => {
    const cutoff = Date.now() - SESSION_IDLE_MS;
    for (const [id, at] of lastSeen) if (at < cutoff) void sessions.get(id)?.close();
  }, 60_000);
  sweep.unref();
  let port = options.port;
  const hostNames = () => new Set(['127.0.0.1', 'localhost', '[::1]', host.includes(':') ? `[${host}]` : host].map((h) => `${h}:${port}`));
  const origins = () => new Set([...[...hostNames()].map((h) => `http://${h}`), ...(options.allowedOrigins ?? [])]);

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname !== MCP_PATH) return refuse(res, 404, `not found: the MCP endpoint is ${MCP_PATH}`);
    if (!hostNames().has((req.headers.host ?? '').toLowerCase())) return refuse(res, 403, 'forbidden: Host header is not this server (DNS rebinding protection)');
    const origin = req.headers.origin;
    if (origin !== undefined && !origins().has(origin.toLowerCase())) return refuse(res, 403, `forbidden: Origin ${origin} is not allowed`);
    if (!tokenMatches(req.headers.authorization, options.token)) return refuse(res, 401, 'unauthorized: send Authorization: Bearer <token> (the token parley-mcp --http wrote or was given)', { 'www-authenticate': 'Bearer' });

    const sessionId = req.headers['mcp-session-id'];
    const existing = typeof sessionId === 'string' ? sessions.get(sessionId) : undefined;
    if (existing && typeof sessionId === 'string') lastSeen.set(sessionId, Date.now());
    if (req.method === 'POST') {
      let body: unknown;
      try {
        body = await readJson(req);
      } catch (err) {
        return refuse(res, 400, `bad request: ${(err as Error).message}`);
      }
      if (existing) return existing.handleRequest(req, res, body);
      if (sessionId !== undefined) return refuse(res, 404, 'unknown or ended session');
      if (!isInitializeRequest(body)) return refuse(res, 400, 'bad request: no session; start with an initialize request');
      if (sessions.size >= MAX_SESSIONS) return refuse(res, 503, `too many sessions (${MAX_SESSIONS}); end one with DELETE or retry later`, { 'retry-after': '60' });
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          sessions.set(id, transport);
          lastSeen.set(id, Date.now());
        },
      });
      transport.onclose = () => {
        if (transport.sessionId) {
          sessions.delete(transport.sessionId);
          lastSeen.delete(transport.sessionId);
        }
      };
      await createMcpServer(runtime).connect(transport);
      return transport.handleRequest(req, res, body);
    }
    if (req.method === 'GET' || req.method === 'DELETE') {
      if (!existing) return refuse(res, sessionId === undefined ? 400 : 404, sessionId === undefined ? 'bad request: Mcp-Session-Id required' : 'unknown or ended session');
      return existing.handleRequest(req, res);
    }
    res.setHeader('allow', 'GET, POST, DELETE');
    return refuse(res, 405, 'method not allowed');
  };

  const server: HttpServer = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) refuse(res, 500, `internal error: ${(err as Error).message}`);
      else res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, host, () => resolve());
  });
  port = (server.address() as AddressInfo).port;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}${MCP_PATH}`,
    port,
    async close() {
      clearInterval(sweep);
      await Promise.all([...sessions.values()].map((t) => t.close().catch(() => undefined)));
      sessions.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * The tool server over Streamable HTTP (MCP transport spec 2025-06-18; issue 19): `POST/GET/DELETE
 * /mcp` with sessions (`Mcp-Session-Id`; one MCP `Server` per session, sharing the tool runtime),
 * bound to 127.0.0.1 unless told otherwise. Against DNS rebinding, a request whose `Host` is not
 * one of this server's own names (127.0.0.1 / localhost / [::1] / the bound host, with its port) or
 * whose `Origin` (when sent) is not an allowed origin is refused with 403 before it reaches MCP.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { createMcpServer, type ToolRuntime } from './server.js';

/** Default port of `--http` (no port given). */
export const DEFAULT_HTTP_PORT = 8765;
/** The MCP endpoint path. */
export const MCP_PATH = '/mcp';

/** Options of {@link startHttpServer}. */
export interface HttpOptions {
  /** Port (0 = any free port). */
  port: number;
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

function refuse(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' });
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
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  let port = options.port;
  const hostNames = () => new Set(['127.0.0.1', 'localhost', '[::1]', host.includes(':') ? `[${host}]` : host].map((h) => `${h}:${port}`));
  const origins = () => new Set([...[...hostNames()].map((h) => `http://${h}`), ...(options.allowedOrigins ?? [])]);

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname !== MCP_PATH) return refuse(res, 404, `not found: the MCP endpoint is ${MCP_PATH}`);
    if (!hostNames().has((req.headers.host ?? '').toLowerCase())) return refuse(res, 403, 'forbidden: Host header is not this server (DNS rebinding protection)');
    const origin = req.headers.origin;
    if (origin !== undefined && !origins().has(origin.toLowerCase())) return refuse(res, 403, `forbidden: Origin ${origin} is not allowed`);

    const sessionId = req.headers['mcp-session-id'];
    const existing = typeof sessionId === 'string' ? sessions.get(sessionId) : undefined;
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
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          sessions.set(id, transport);
        },
      });
      transport.onclose = () => {
        if (transport.sessionId) sessions.delete(transport.sessionId);
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
      await Promise.all([...sessions.values()].map((t) => t.close().catch(() => undefined)));
      sessions.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

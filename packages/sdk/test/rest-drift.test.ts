/**
 * Drift test: the served routes are the contract's rows. Every row of `ROUTES` (`@parley/protocol`,
 * the SDK's route table) is registered by the server with the row's own schema objects (body,
 * query, params, answers), every registered REST route comes from a row, and the OpenAPI document
 * lists exactly the rows' method + path pairs with the security their auth mode implies. On the
 * client side, every row is the `ParleyClient` method of its name, and that method sends the
 * row's HTTP method to the row's path, with its positional arguments read as the row says.
 */
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import type { RouteOptions } from 'fastify';
import { fillPath, ROUTES, securityOf, type CreateInviteRequest, type MessageInput, type MessagePage, type RouteContract, type RouteName } from '@parley/protocol';
import { startApp, type TestApp } from '@parley/server/testing';
import { ROUTES as SDK_ROUTES } from '../src/client/routes.js';
import { ParleyClient, type RequestOptions } from '../src/client/rest.js';
import { pathParamNames, type PathArgs, type PathParamNames } from '../src/client/route-methods.js';

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;
/** Served outside the contract on purpose: the WebSocket upgrade, the OpenAPI and AsyncAPI documents and the docs pages. */
const NOT_REST = (url: string) => url === '/api/v1/ws' || url === '/api/v1/openapi.json' || url === '/api/v1/asyncapi.json' || url.startsWith('/docs');
const rowKey = (r: { method: string; path: string }) => `${r.method} ${r.path}`;
const toOpenApiPath = (url: string) => url.replace(/:(\w+)/g, '{$1}');

describe('wire contract drift', () => {
  let t: TestApp;
  const served: RouteOptions[] = [];
  let doc: { paths: Record<string, Record<string, { security?: Array<Record<string, unknown>> }>> };

  beforeAll(async () => {
    t = await startApp({ listen: true, overrides: { onRoute: (r) => void served.push(r) } });
    const res = await fetch(`${t.baseUrl}/api/v1/openapi.json`);
    expect(res.status).toBe(200);
    doc = (await res.json()) as typeof doc;
  });
  afterAll(() => t?.close());

  const rows = Object.entries(ROUTES) as [string, RouteContract][];
  const servedRest = () => served.filter((r) => !NOT_REST(r.url) && r.method !== 'HEAD');

  it('the SDK route table is the contract', () => {
    expect(SDK_ROUTES).toBe(ROUTES);
    expect(rows.length).toBeGreaterThanOrEqual(130);
    expect(new Set(rows.map(([, r]) => rowKey(r))).size).toBe(rows.length);
  });

  it('every contract row is served with its own schema objects', () => {
    const problems: string[] = [];
    for (const [name, row] of rows) {
      const route = servedRest().find((r) => r.method === row.method && toOpenApiPath(r.url) === row.path);
      if (!route) {
        problems.push(`${name}: ${rowKey(row)} is not served`);
        continue;
      }
      const schema = (route.schema ?? {}) as Record<string, unknown>;
      if (route.config?.contract !== row) problems.push(`${name}: not registered from its row`);
      if (route.config?.auth !== row.auth) problems.push(`${name}: auth ${String(route.config?.auth)} vs ${row.auth}`);
      if (schema.body !== row.body) problems.push(`${name}: body schema differs`);
      if (schema.querystring !== row.query) problems.push(`${name}: query schema differs`);
      if (schema.params !== row.params) problems.push(`${name}: params schema differs`);
      const response = (schema.response ?? {}) as Record<string, unknown>;
      for (const [status, s] of Object.entries(row.responses)) if (s && response[status] !== s) problems.push(`${name}: ${status} answer schema differs`);
    }
    expect(problems).toEqual([]);
  });

  it('every served REST route comes from a contract row', () => {
    const strays = servedRest()
      .filter((r) => !r.config?.contract)
      .map((r) => `${String(r.method)} ${r.url}`);
    expect(strays).toEqual([]);
  });

  it('the OpenAPI document lists exactly the rows, with the security of their auth mode', () => {
    const documented = new Set<string>();
    const mismatches: string[] = [];
    for (const [path, ops] of Object.entries(doc.paths)) for (const m of METHODS) if (ops[m]) documented.add(`${m.toUpperCase()} ${path}`);
    expect([...documented].sort()).toEqual(rows.map(([, r]) => rowKey(r)).sort());
    for (const [name, row] of rows) {
      const op = doc.paths[row.path]?.[row.method.toLowerCase()];
      const want = (securityOf(row.auth) ?? []).map((s) => Object.keys(s).join()).sort();
      const got = (op?.security ?? []).map((s) => Object.keys(s).join()).sort();
      if (got.join('|') !== want.join('|')) mismatches.push(`${name}: ${row.auth} documented as [${got.join(' | ')}]`);
    }
    expect(mismatches).toEqual([]);
  });

  it('every contract row is a client method sending the row\'s method, path, body or query', async () => {
    const sent: { method: string; url: URL; body: unknown }[] = [];
    const client = new ParleyClient({
      baseUrl: 'http://parley.test',
      ownerToken: 'owner-jwt',
      deviceToken: 'device-jwt',
      fetch: async (input, init) => {
        sent.push({ method: String(init.method), url: new URL(input), body: typeof init.body === 'string' ? JSON.parse(init.body) : init.body });
        return new Response('{}', { status: 200, headers: { 'content-type': 'application/json' } });
      },
    });
    const methods = client as unknown as Record<RouteName, (...args: unknown[]) => Promise<unknown>>;
    const problems: string[] = [];
    for (const [name, row] of rows) {
      if (typeof methods[name as RouteName] !== 'function') {
        problems.push(`${name}: no client method`);
        continue;
      }
      if (name === 'uploadAttachment' || name === 'downloadAttachment') continue; // hand-written: a raw body, a binary answer
      const params = Object.fromEntries(pathParamNames(row.path).map((p, i) => [p, `${p}-${i} /`]));
      const input = { marker: name };
      sent.length = 0;
      await methods[name as RouteName](...Object.values(params), ...(row.body || row.query ? [input] : []), { headers: { 'x-drift': name } });
      const req = sent[0];
      if (sent.length !== 1 || !req) {
        problems.push(`${name}: sent ${sent.length} requests`);
        continue;
      }
      if (req.method !== row.method) problems.push(`${name}: sent ${req.method}, the row says ${row.method}`);
      if (req.url.pathname !== fillPath(row.path, params)) problems.push(`${name}: sent ${req.url.pathname} for ${row.path}`);
      if (row.body && JSON.stringify(req.body) !== JSON.stringify(input)) problems.push(`${name}: body not sent as the row's JSON body`);
      if (!row.body && req.body !== undefined) problems.push(`${name}: a body sent for a row without one`);
      if (!row.body && row.query && req.url.searchParams.get('marker') !== name) problems.push(`${name}: query not sent`);
      if (!row.query && !row.body && req.url.search !== '') problems.push(`${name}: a query sent for a row without one`);
    }
    expect(problems).toEqual([]);
  });

  it('derives the positional path arguments from the path template', () => {
    expect(pathParamNames('/api/v1/rooms/{id}/members/{device_id}')).toEqual(['id', 'device_id']);
    expect(pathParamNames('/api/v1/me')).toEqual([]);
    expectTypeOf<PathParamNames<'/api/v1/rooms/{id}/members/{device_id}'>>().toEqualTypeOf<['id', 'device_id']>();
    expectTypeOf<PathArgs<'/api/v1/devices/{device_id}/keys'>>().toEqualTypeOf<[string]>();
    expectTypeOf<PathArgs<'/api/v1/me'>>().toEqualTypeOf<[]>();
    expectTypeOf<Parameters<ParleyClient['removeRoomMember']>>().toEqualTypeOf<[string, string, opts?: RequestOptions]>();
    expectTypeOf<ReturnType<ParleyClient['removeRoomMember']>>().toEqualTypeOf<Promise<void>>();
    expectTypeOf<Parameters<ParleyClient['sendMessage']>>().toEqualTypeOf<[string, body: MessageInput, opts?: RequestOptions]>();
    expectTypeOf<Parameters<ParleyClient['createInvite']>>().toEqualTypeOf<[body?: CreateInviteRequest, opts?: RequestOptions]>();
    expectTypeOf<ReturnType<ParleyClient['deviceMessages']>>().toEqualTypeOf<Promise<MessagePage>>();
  });
});

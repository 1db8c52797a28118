/**
 * Drift test: the served routes are the contract's rows. Every row of `ROUTES` (`@parley/protocol`,
 * the SDK's route table) is registered by the server with the row's own schema objects (body,
 * query, params, answers), every registered REST route comes from a row, and the OpenAPI document
 * lists exactly the rows' method + path pairs with the security their auth mode implies.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RouteOptions } from 'fastify';
import { ROUTES, securityOf, type RouteContract } from '@parley/protocol';
import { startApp, type TestApp } from '../../server/test/harness.js';
import { ROUTES as SDK_ROUTES } from '../src/client/routes.js';

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
});

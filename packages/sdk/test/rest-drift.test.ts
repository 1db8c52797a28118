/**
 * Drift test: the SDK's route table (packages/sdk/src/client/routes.ts) and the service's OpenAPI
 * document (GET /api/v1/openapi.json) list the same method + path pairs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../../server/test/harness.js';
import { ROUTES } from '../src/client/routes.js';

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

describe('REST route table drift', () => {
  let t: TestApp;
  let serverRoutes: Set<string>;
  const sdkRoutes = new Set(Object.values(ROUTES).map((r) => `${r.method} ${r.path}`));

  beforeAll(async () => {
    t = await startApp({ listen: true });
    const res = await fetch(`${t.baseUrl}/api/v1/openapi.json`);
    expect(res.status).toBe(200);
    const doc = (await res.json()) as { paths: Record<string, Record<string, unknown>> };
    serverRoutes = new Set();
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const m of METHODS) if (ops[m]) serverRoutes.add(`${m.toUpperCase()} ${path}`);
    }
  });
  afterAll(() => t?.close());

  it('the OpenAPI document lists a plausible number of routes', () => {
    expect(serverRoutes.size).toBeGreaterThanOrEqual(30);
  });

  it('every server route is in the SDK route table', () => {
    const missing = [...serverRoutes].filter((r) => !sdkRoutes.has(r)).sort();
    expect(missing, `server routes missing from ROUTES: ${missing.join(', ')}`).toEqual([]);
  });

  it('every SDK route exists on the server', () => {
    const unknown = [...sdkRoutes].filter((r) => !serverRoutes.has(r)).sort();
    expect(unknown, `ROUTES entries the server does not serve: ${unknown.join(', ')}`).toEqual([]);
  });

  it('route table entries are unique', () => {
    expect(sdkRoutes.size).toBe(Object.keys(ROUTES).length);
  });

  it('auth modes match the OpenAPI security requirements', async () => {
    const doc = (await (await fetch(`${t.baseUrl}/api/v1/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { security?: Array<Record<string, unknown>> }>>;
    };
    const mismatches: string[] = [];
    for (const [name, r] of Object.entries(ROUTES)) {
      const op = doc.paths[r.path]?.[r.method.toLowerCase()];
      const schemes = new Set((op?.security ?? []).flatMap((s) => Object.keys(s)));
      const expected = {
        none: [],
        owner: ['ownerJwt'],
        'owner-any': ['ownerJwt'],
        device: ['deviceJwt'],
        'owner-or-device': ['deviceJwt', 'ownerJwt'],
        'owner-or-apikey': ['apiKey', 'ownerJwt'],
        'device-or-apikey': ['apiKey', 'deviceJwt'],
        any: ['apiKey', 'deviceJwt', 'ownerJwt'],
        public: ['apiKey', 'deviceJwt', 'ownerJwt'],
      }[r.auth];
      // Public routes list an empty requirement too (no credential needed); no other route does.
      const optional = (op?.security ?? []).some((s) => Object.keys(s).length === 0);
      if (optional !== (r.auth === 'public')) mismatches.push(`${name}: sdk ${r.auth}, server security ${optional ? 'optional' : 'required'}`);
      if ([...schemes].sort().join() !== expected.join()) mismatches.push(`${name}: sdk ${r.auth}, server [${[...schemes].join(', ')}]`);
    }
    expect(mismatches).toEqual([]);
  });
});

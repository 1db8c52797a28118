/**
 * Route schemas are compiled on first use (http/lazy-schemas.ts, cold start):
 * every one of the app's validators and serializers still compiles (compilePendingSchemas, what
 * the service runs once it listens), validation and serialization behave as before on a route
 * whose schemas were never compiled, and a validator that fails to compile answers 500.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compilePendingSchemas, lazyCompiled, pendingSchemaCount } from '../../src/http/lazy-schemas.js';
import { startApp, type TestApp } from '../../testing/harness.js';

describe('lazily compiled route schemas', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('validate and serialize on first use like eagerly compiled ones', async () => {
    expect(pendingSchemaCount()).toBeGreaterThan(100);
    // A query string coerced and checked (400 on a bad value), a body never coerced.
    expect((await t.request({ method: 'GET', url: '/api/v1/hub/search?limit=abc' })).status).toBe(400);
    expect((await t.request({ method: 'GET', url: '/api/v1/hub/search?limit=5' })).status).toBe(200);
    const bad = await t.request({ method: 'POST', url: '/api/v1/tenants', payload: { name: 5 }, headers: { authorization: `Bearer ${await t.ownerToken('lazy@example.com')}` } });
    expect(bad.status).toBe(400);
    // A response serialized by its schema.
    const health = await t.request({ method: 'GET', url: '/health' });
    expect(health.status).toBe(200);
    expect(health.body).toEqual({ status: 'ok', version: expect.any(String) });
  });

  it('every schema of the app compiles', async () => {
    await compilePendingSchemas();
    expect(pendingSchemaCount()).toBe(0);
  });

  it('a schema that does not compile fails its first call and is reported by compilePendingSchemas', async () => {
    const broken = lazyCompiled((): ((data: unknown) => boolean) => {
      throw new Error('bad schema');
    }, true);
    expect(() => broken({})).toThrow('bad schema');
    await expect(compilePendingSchemas()).rejects.toThrow('bad schema');
    expect(pendingSchemaCount()).toBe(0);
  });
});

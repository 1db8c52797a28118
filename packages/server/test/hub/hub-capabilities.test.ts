/**
 * Hub capabilities (contract §2.8, §4.10): `GET`/`POST /hub/{hub_address}/capabilities` — JSON Schema
 * validation of `input_schema` (Ajv meta-schema check), SLA and version rules, duplicates, the
 * route matrix across tenants; and the registration rules (the owner key
 * must be a valid Ed25519 point; reserved addresses).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { activeAgent, newOwner, type Agent, type Owner } from '../../testing/flows.js';
import { startApp, type TestApp } from '../../testing/harness.js';
import { hubOwnerKey } from '../../testing/keys.js';

let seq = 0;
const addr = (prefix = 'cap') => `${prefix}-${Date.now().toString(36)}-${++seq}`;
const ownerKey = hubOwnerKey;
const b64 = (hex: string) => Buffer.from(hex, 'hex').toString('base64');

const TRANSLATE_SCHEMA = {
  type: 'object',
  properties: { text: { type: 'string', maxLength: 10_000 }, target: { enum: ['en', 'fr', 'de'] } },
  required: ['text', 'target'],
  additionalProperties: false,
};

describe('hub capabilities', () => {
  let t: TestApp;
  let a: Owner;
  let b: Owner;
  let aAgent: Agent;

  const register = (owner: Owner, body: Record<string, unknown>) => t.request({ method: 'POST', url: '/api/v1/hub/identities', headers: owner.auth, payload: body });
  const identity = async (owner: Owner) => {
    const res = await register(owner, { hub_address: addr(), display_name: 'Capable', public_key: ownerKey() });
    expect(res.status).toBe(201);
    return res.body.hub_address as string;
  };
  const post = (address: string, body: unknown, headers: Record<string, string> = a.auth) =>
    t.request({ method: 'POST', url: `/api/v1/hub/${address}/capabilities`, headers, payload: body as object });
  const list = (address: string, headers: Record<string, string> = a.auth) => t.request({ method: 'GET', url: `/api/v1/hub/${address}/capabilities`, headers });

  beforeAll(async () => {
    t = await startApp();
    a = await newOwner(t, 'Tenant A');
    b = await newOwner(t, 'Tenant B');
    aAgent = await activeAgent(t, a);
  });
  afterAll(() => t.close());

  describe('registration owner key (contract §2.8, design §7)', () => {
    it('accepts a real Ed25519 key and refuses 32 bytes that are no usable point (400)', async () => {
      expect((await register(a, { hub_address: addr(), display_name: 'K', public_key: ownerKey() })).status).toBe(201);
      const bad = {
        'not on the curve (y = 2)': b64('02' + '00'.repeat(31)),
        'non-canonical y (>= p)': b64('ff'.repeat(32)),
        'small order: the identity point': b64('01' + '00'.repeat(31)),
        'small order: y = 0 (order 4)': b64('00'.repeat(32)),
      };
      for (const [why, key] of Object.entries(bad)) {
        const res = await register(a, { hub_address: addr(), display_name: 'K', public_key: key });
        expect(res.status, why).toBe(400);
        expect(res.body.detail).toMatch(/Ed25519/);
      }
    });

    it('reserves the path words that share /hub/{segment}/… with address routes (409)', async () => {
      for (const word of ['search', 'identities', 'register', 'resolve', 'credentials', 'SEARCH']) {
        const res = await register(a, { hub_address: word, display_name: 'Squat', public_key: ownerKey() });
        expect(res.status, word).toBe(409);
        expect(res.body.detail).toMatch(/reserved/);
      }
    });
  });

  it('registers a capability (201) and lists it with certification_tier and registered_at', async () => {
    const address = await identity(a);
    expect((await list(address)).body).toEqual({ capabilities: [] });
    const body = { name: 'translate', version: '1.2.0', description: 'fr/en/de translation', input_schema: TRANSLATE_SCHEMA, sla: { latency_p95_ms: 850, uptime_sla: 0.999 } };
    const res = await post(address.toUpperCase(), body);
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ ...body, certification_tier: 'unverified', registered_at: expect.any(String) });
    expect(Number.isNaN(Date.parse(res.body.registered_at))).toBe(false);
    const minimal = await post(address, { name: 'summarize', version: '1', input_schema: { type: 'string' } });
    expect(minimal.status).toBe(201);
    expect(minimal.body).toMatchObject({ description: null, sla: null, certification_tier: 'unverified' });
    const listed = await list(address);
    expect(listed.status).toBe(200);
    expect(listed.body.capabilities).toEqual([res.body, minimal.body]);
  });

  it('refuses a duplicate name + version (409); another version is a new capability', async () => {
    const address = await identity(a);
    const cap = { name: 'ocr', version: '2.0.0', input_schema: { type: 'object' } };
    expect((await post(address, cap)).status).toBe(201);
    const dup = await post(address, { ...cap, description: 'again' });
    expect(dup.status).toBe(409);
    expect(dup.body.detail).toMatch(/already registered/);
    expect((await post(address, { ...cap, version: '2.1.0' })).status).toBe(201);
    // Same name and version on another identity is fine.
    expect((await post(await identity(a), cap)).status).toBe(201);
    expect((await list(address)).body.capabilities).toHaveLength(2);
  });

  describe('input_schema is validated as JSON Schema (Ajv validateSchema)', () => {
    let address: string;
    beforeAll(async () => {
      address = await identity(a);
    });
    const withSchema = (input_schema: unknown, name = `s${++seq}`) => post(address, { name, version: '1.0.0', input_schema });

    it.each([
      ['2020-12 (default, $defs and $ref)', { $defs: { lang: { enum: ['en', 'fr'] } }, type: 'object', properties: { to: { $ref: '#/$defs/lang' } } }],
      ['2020-12 declared', { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'array', prefixItems: [{ type: 'string' }] }],
      ['2019-09 declared', { $schema: 'https://json-schema.org/draft/2019-09/schema#', type: 'object', dependentRequired: { a: ['b'] } }],
      ['draft-07 declared (tuple items)', { $schema: 'http://json-schema.org/draft-07/schema#', type: 'array', items: [{ type: 'string' }, { type: 'number' }] }],
      ['the empty schema', {}],
      ['boolean subschemas', { type: 'object', properties: { x: true, y: false } }],
    ])('accepts %s', async (_why, schema) => {
      const res = await withSchema(schema);
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(res.body.input_schema).toEqual(schema);
    });

    it.each([
      ['{"type": 12}', { type: 12 }, /input_schema\/type/],
      ['an unknown type name', { type: 'text' }, /input_schema\/type/],
      ['required that is not an array of strings', { type: 'object', required: 'text' }, /input_schema\/required/],
      ['a negative maxLength', { type: 'string', maxLength: -1 }, /input_schema\/maxLength/],
      ['properties that is not an object', { properties: [] }, /input_schema\/properties/],
      ['tuple items under 2020-12', { type: 'array', items: [{ type: 'string' }] }, /input_schema\/items/],
      ['an unsupported $schema', { $schema: 'https://example.com/my-meta', type: 'object' }, /\$schema is not supported/],
      ['a $schema that is not a string', { $schema: 7 }, /\$schema must be a string/],
    ])('refuses %s (400 naming the problem)', async (_why, schema, detail) => {
      const res = await withSchema(schema);
      expect(res.status).toBe(400);
      expect(res.body.detail).toMatch(detail);
    });

    it('refuses a non-object input_schema, a missing one, and hostile size or depth (400, no 5xx)', async () => {
      for (const schema of [[], 'string', 42, true, null]) expect((await withSchema(schema)).status, JSON.stringify(schema)).toBe(400);
      expect((await post(address, { name: 'none', version: '1' })).status).toBe(400);
      // Nesting: raw JSON text (a client-side JSON.stringify would overflow first).
      for (const depth of [33, 5000]) {
        const nested = '{"not":'.repeat(depth) + '{}' + '}'.repeat(depth);
        const payload = `{"name":"deep${depth}","version":"1","input_schema":${nested}}`;
        const res = await t.request({ method: 'POST', url: `/api/v1/hub/${address}/capabilities`, headers: { ...a.auth, 'content-type': 'application/json' }, payload });
        expect(res.status, String(depth)).toBe(400);
        expect(res.body.detail).toMatch(/deeper than 32/);
      }
      let ok: Record<string, unknown> = {};
      for (let i = 0; i < 31; i++) ok = { not: ok };
      expect((await withSchema(ok)).status).toBe(201);
      const big = await withSchema({ type: 'object', description: 'x'.repeat(70_000) });
      expect(big.status).toBe(400);
      expect(big.body.detail).toMatch(/larger than/);
    });
  });

  it('validates name, version and sla (400)', async () => {
    const address = await identity(a);
    const ok = { name: 'n', version: '1.0.0', input_schema: { type: 'object' } };
    for (const version of ['1.0.0-beta.1', '1.0.0+build.7', '0.1', '10']) expect((await post(address, { ...ok, name: `v-${version}`, version })).status, version).toBe(201);
    const bad: Record<string, unknown>[] = [
      {},
      { ...ok, name: '' },
      { ...ok, name: 'x'.repeat(101) },
      { ...ok, version: '' },
      { ...ok, version: 'v1' },
      { ...ok, version: '1.2.3.4' },
      { ...ok, version: '01.2' },
      { ...ok, version: 'latest' },
      { ...ok, description: 'x'.repeat(1001) },
      { ...ok, sla: { latency_p95_ms: -1, uptime_sla: 0.9 } },
      { ...ok, sla: { latency_p95_ms: 10, uptime_sla: 1.5 } },
      { ...ok, sla: { latency_p95_ms: 10, uptime_sla: -0.1 } },
      { ...ok, sla: { latency_p95_ms: 10 } },
      { ...ok, sla: { uptime_sla: 0.5 } },
      { ...ok, sla: 'fast' },
    ];
    for (const body of bad) {
      const res = await post(address, body);
      expect(res.status, JSON.stringify(body).slice(0, 120)).toBe(400);
      expect(res.body.detail).toEqual(expect.any(String));
    }
    expect((await post(address, { ...ok, sla: { latency_p95_ms: 0, uptime_sla: 1 } })).status).toBe(201);
  });

  it('route matrix: 401 without or with a bad token, 403 for a device token, 404 across tenants, 400 malformed address', async () => {
    const address = await identity(a);
    const cap = { name: 'x', version: '1', input_schema: {} };
    for (const req of [() => list(address, {}), () => post(address, cap, {}), () => list(address, { authorization: 'Bearer nope' }), () => post(address, cap, { authorization: 'Bearer nope' })]) {
      expect((await req()).status).toBe(401);
    }
    expect((await list(address, aAgent.auth)).status).toBe(403);
    expect((await post(address, cap, aAgent.auth)).status).toBe(403);
    // Tenant B sees neither the list nor can it register on A's identity.
    expect((await list(address, b.auth)).status).toBe(404);
    expect((await post(address, cap, b.auth)).status).toBe(404);
    expect((await list(address)).body.capabilities).toEqual([]);
    // Unknown and malformed addresses.
    expect((await list(addr('unknown'))).status).toBe(404);
    expect((await post(addr('unknown'), cap)).status).toBe(404);
    expect((await list('-bad-')).status).toBe(400);
    expect((await post('a_b', cap)).status).toBe(400);
  });
});

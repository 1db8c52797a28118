/**
 * Property tests over the whole HTTP surface (contract §7, design §7 "errors {detail} — every error,
 * the framework's own included"). Routes are taken from the generated OpenAPI document, so new
 * routes are fuzzed automatically: random JSON bodies, wrong field types, random path and query
 * values, all with valid owner auth, must never produce a 5xx, and every 4xx carries {detail}.
 */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { activeAgent, createInvite, enroll, newOwner, registerOwnerDevice, type Agent, type Owner, type OwnerDevice } from '../../testing/flows.js';
import { startApp, type TestApp } from '../../testing/harness.js';

const RUNS = 40;

interface Schema {
  type?: string | string[];
  format?: string;
  pattern?: string;
  enum?: unknown[];
  anyOf?: Schema[];
  properties?: Record<string, Schema>;
  required?: string[];
}

interface Route {
  method: 'get' | 'post' | 'patch' | 'delete' | 'put';
  path: string;
  body?: Schema;
  pathParams: string[];
  queryParams: string[];
  security: string[];
}

const HEX = '0123456789abcdef';
const hexString = (n: number) => fc.string({ unit: fc.constantFrom(...HEX), minLength: n, maxLength: n });
/** Strings a database or parser may choke on. */
const nastyString = fc.constantFrom('', ' ', '\u0000', 'a\u0000b', '\\', '"', "'; drop table devices; --", '%00', '\u202e', '𝕏', 'null', '0', '-1', '1e309', 'x'.repeat(5000));
const anyString = fc.oneof(fc.string(), fc.string({ unit: 'grapheme' }), fc.string({ unit: 'binary-ascii' }), nastyString);
/** Values of a type other than the one a field wants. */
const wrongType = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.jsonValue({ maxDepth: 1 }), { maxLength: 3 }),
  fc.object({ maxDepth: 1 }),
  anyString,
);

/**
 * A value that is plausible for the field's schema (so requests get past validation); with
 * `strict` false, strings may also be arbitrary.
 */
function plausible(s: Schema, strict = false): fc.Arbitrary<unknown> {
  const loose = (a: fc.Arbitrary<unknown>) => (strict ? a : fc.oneof(a, anyString));
  if (s.anyOf) return fc.oneof(...s.anyOf.map((x) => plausible(x, strict)));
  if (s.enum) return fc.constantFrom(...s.enum);
  const type = Array.isArray(s.type) ? s.type[0] : s.type;
  if (type === 'null') return fc.constant(null);
  if (type === 'boolean') return fc.boolean();
  if (type === 'integer' || type === 'number') return fc.oneof(fc.integer(), fc.constantFrom(0, -1, 1, 2 ** 31, Number.MAX_SAFE_INTEGER));
  if (type === 'object') return s.properties ? bodyFor(s) : fc.object({ maxDepth: 1 });
  if (type === 'array') return fc.array(fc.jsonValue({ maxDepth: 1 }), { maxLength: 3 });
  if (s.format === 'uuid') return fc.uuid();
  if (s.format === 'uri') return loose(fc.webUrl());
  if (s.format === 'date-time') return loose(fc.date({ noInvalidDate: true }).map((d) => d.toISOString()));
  if (s.pattern?.includes('{64}')) return hexString(64);
  if (s.pattern?.includes('{128}')) return hexString(128);
  if (s.pattern?.includes('A-Za-z0-9+/')) return loose(fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b).toString('base64')));
  return anyString;
}

/** A body that satisfies the schema's shape (required fields present, plausible values), optionally with one field of a wrong type. */
function validBody(s: Schema, ids: () => Record<string, string[]>): fc.Arbitrary<Record<string, unknown>> {
  const props = s.properties ?? {};
  const required = s.required ?? [];
  const rec: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [k, v] of Object.entries(props)) {
    // A field naming another resource (`group_id`) sometimes gets a real id.
    const real = k.endsWith('_id') ? (ids()[k.replace(/_id$/, 's')] ?? []) : [];
    rec[k] = real.length > 0 ? fc.oneof(fc.constantFrom(...real), plausible(v, true)) : plausible(v, true);
  }
  const base = fc.record(rec, { requiredKeys: required });
  const keys = Object.keys(props);
  if (keys.length === 0) return base;
  return fc.tuple(base, fc.option(fc.tuple(fc.constantFrom(...keys), wrongType), { nil: undefined, freq: 2 })).map(([b, broken]) =>
    broken ? { ...b, [broken[0]]: broken[1] } : b,
  );
}

/** An object body with the schema's fields, each either plausible or of a wrong type, any subset present. */
function bodyFor(s: Schema): fc.Arbitrary<Record<string, unknown>> {
  const props = s.properties ?? {};
  const rec: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [k, v] of Object.entries(props)) rec[k] = fc.oneof({ weight: 3, arbitrary: plausible(v) }, { weight: 2, arbitrary: wrongType });
  const fields = fc.record(rec, { requiredKeys: [] });
  // Sometimes add an unknown field as well.
  return fc.tuple(fields, fc.option(fc.tuple(fc.string({ minLength: 1, maxLength: 10 }), fc.jsonValue({ maxDepth: 1 })), { nil: undefined })).map(([f, extra]) =>
    extra && !(extra[0] in props) && extra[0] !== '__proto__' ? { ...f, [extra[0]]: extra[1] } : f,
  );
}

describe('fuzz: every POST/PATCH route of the OpenAPI document', () => {
  let t: TestApp;
  let owner: Owner;
  let od: OwnerDevice;
  let agent: Agent;
  let routes: Route[];
  /** Real ids by the first path segment after /api/v1/. */
  let ids: Record<string, string[]>;

  beforeAll(async () => {
    t = await startApp({ env: { RATE_LIMITS: 'off' } });
    owner = await newOwner(t, 'Fuzz');
    od = await registerOwnerDevice(t, owner);
    agent = await activeAgent(t, owner);
    const invite = await createInvite(t, owner);
    const topic = await t.request({ method: 'POST', url: '/api/v1/topics', headers: owner.auth, payload: { group_id: agent.groupId, name: 'fuzz' } });
    // Device routes get their own victims (an agent, an owner device, a PENDING device), so that
    // fuzzing revoke / approve does not disable the device and conversation the other routes use.
    const victimAgent = await activeAgent(t, owner);
    const victimOwnerDevice = await registerOwnerDevice(t, owner);
    const pending = await enroll(t, (await createInvite(t, owner)).token);
    expect(pending.res.status).toBe(201);
    ids = {
      invites: [invite.id],
      devices: [victimAgent.deviceId, victimOwnerDevice.deviceId, pending.res.body.device_id],
      conversations: [agent.conversationId!],
      topics: [topic.body.topic_id, agent.defaultTopicId],
      groups: [agent.groupId],
    };
    const doc = await t.request({ method: 'GET', url: '/api/v1/openapi.json' });
    expect(doc.status).toBe(200);
    routes = [];
    for (const [path, ops] of Object.entries(doc.body.paths as Record<string, Record<string, any>>)) {
      for (const [method, op] of Object.entries(ops)) {
        if (!['get', 'post', 'patch', 'put', 'delete'].includes(method)) continue;
        const params = (op.parameters ?? []) as { in: string; name: string }[];
        routes.push({
          method: method as Route['method'],
          path,
          body: op.requestBody?.content?.['application/json']?.schema,
          pathParams: params.filter((p) => p.in === 'path').map((p) => p.name),
          queryParams: params.filter((p) => p.in === 'query').map((p) => p.name),
          security: (op.security ?? []).flatMap((s: Record<string, unknown>) => Object.keys(s)),
        });
      }
    }
  });
  afterAll(() => t?.close());

  /** Path param values: the real ids for that resource, or a random UUID. */
  const paramValue = (path: string) => {
    const segment = path.replace(/^\/api\/v1\//, '').split('/')[0]!;
    const real = ids[segment] ?? [];
    return real.length > 0 ? fc.oneof(fc.constantFrom(...real), fc.uuid()) : fc.uuid();
  };
  const fillPath = (path: string, values: string[]) => {
    let i = 0;
    return path.replace(/\{[^}]+\}/g, () => encodeURIComponent(values[i++]!));
  };

  /** The property every response must satisfy. */
  function checkResponse(res: { status: number; body: unknown }): string | undefined {
    if (res.status >= 500) return `status ${res.status}: ${JSON.stringify(res.body)}`;
    if (res.status >= 400) {
      const detail = (res.body as { detail?: unknown } | undefined)?.detail;
      if (typeof detail !== 'string' || detail === '') return `status ${res.status} without a string detail: ${JSON.stringify(res.body)}`;
    }
    return undefined;
  }

  /** Statuses seen per route label (to show the fuzz reaches handlers, not only validation). */
  const seen = new Map<string, Set<number>>();

  /** Runs a property for one route; returns a failure description or undefined. */
  async function fuzzRoute<T>(label: string, arb: fc.Arbitrary<T>, send: (v: T) => Promise<{ status: number; body: unknown }>, numRuns = RUNS) {
    let last = '';
    const statuses = seen.get(label) ?? new Set<number>();
    seen.set(label, statuses);
    const details = await fc.check(
      fc.asyncProperty(arb, async (v) => {
        const res = await send(v);
        statuses.add(res.status);
        const problem = checkResponse(res);
        if (problem) last = problem;
        return problem === undefined;
      }),
      { numRuns, seed: Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31) },
    );
    return details.failed ? `${label}: ${last}; counterexample ${JSON.stringify(details.counterexample)} (seed ${details.seed}, path ${details.counterexamplePath})` : undefined;
  }

  it('the OpenAPI document lists the write routes to fuzz', () => {
    const writes = routes.filter((r) => r.method === 'post' || r.method === 'patch').map((r) => `${r.method.toUpperCase()} ${r.path}`);
    expect(writes).toEqual(
      expect.arrayContaining([
        'POST /api/v1/tenants',
        'POST /api/v1/invites',
        'POST /api/v1/enroll',
        'PATCH /api/v1/devices/{id}/approve',
        'POST /api/v1/conversations/{id}/messages',
        'POST /api/v1/topics',
        'PATCH /api/v1/topics/{id}',
        'POST /api/v1/topics/{id}/archive',
      ]),
    );
    expect(writes.length).toBeGreaterThanOrEqual(15);
  });

  it(`random JSON bodies never give a 5xx, and every 4xx has {detail} (${RUNS} runs per route)`, { timeout: 300_000 }, async () => {
    const failures: string[] = [];
    for (const r of routes.filter((x) => x.method === 'post' || x.method === 'patch')) {
      const body = fc.oneof(fc.jsonValue(), fc.object(), ...(r.body?.properties ? [bodyFor(r.body), validBody(r.body, () => ids), validBody(r.body, () => ids)] : []));
      const params = fc.tuple(...r.pathParams.map(() => paramValue(r.path)));
      const device = fc.constantFrom(od.deviceId, od.deviceId, agent.deviceId, randomUUID(), 'not-a-device');
      const failure = await fuzzRoute(`${r.method.toUpperCase()} ${r.path}`, fc.tuple(body, params, device), ([b, p, dev]) =>
        t.request({
          method: r.method.toUpperCase() as 'POST' | 'PATCH',
          url: fillPath(r.path, p as string[]),
          headers: { ...owner.auth, 'x-device-id': dev, 'content-type': 'application/json' },
          payload: JSON.stringify(b),
        }),
      );
      if (failure) failures.push(failure);
    }
    if (process.env.FUZZ_VERBOSE) console.log([...seen].map(([k, v]) => `${k}: ${[...v].sort().join(',')}`).join('\n'));
    // The bodies get past validation often enough to reach handlers and succeed somewhere.
    const all = [...seen].filter(([k]) => !k.includes('(')).flatMap(([, v]) => [...v]);
    expect(all.some((s) => s >= 200 && s < 300), JSON.stringify([...seen].map(([k, v]) => [k, [...v]]))).toBe(true);
    expect(new Set(all).size).toBeGreaterThanOrEqual(4);
    expect(failures, failures.join('\n')).toEqual([]);
  });

  it('random path parameters never give a 5xx, and every 4xx has {detail} (every route with params)', { timeout: 300_000 }, async () => {
    const failures: string[] = [];
    const segment = fc.oneof(fc.uuid(), anyString.filter((s) => s.length > 0 && s.length < 200), fc.constantFrom('self', '0', '-1', '..', '%', 'null'));
    for (const r of routes.filter((x) => x.pathParams.length > 0)) {
      const failure = await fuzzRoute(
        `${r.method.toUpperCase()} ${r.path} (path)`,
        fc.tuple(...r.pathParams.map(() => segment)),
        (p) =>
          t.request({
            method: r.method.toUpperCase() as 'GET',
            url: fillPath(r.path, p as string[]),
            headers: { ...owner.auth, 'x-device-id': od.deviceId, ...(r.method === 'get' || r.method === 'delete' ? {} : { 'content-type': 'application/json' }) },
            ...(r.method === 'get' || r.method === 'delete' ? {} : { payload: '{}' }),
          }),
        20,
      );
      if (failure) failures.push(failure);
    }
    expect(failures, failures.join('\n')).toEqual([]);
  });

  it('random query values never give a 5xx, and every 4xx has {detail} (every route with query parameters)', { timeout: 300_000 }, async () => {
    const failures: string[] = [];
    const value = fc.oneof(
      anyString,
      fc.integer().map(String),
      fc.date().map((d) => (Number.isNaN(d.getTime()) ? 'Invalid Date' : d.toISOString())),
      fc.constantFrom('0', '-1', '201', '1e3', '9999999999999999999', '0000-01-01T00:00:00Z', '2024-02-30', 'NaN', 'true', '[]'),
    );
    const queried = routes.filter((x) => x.queryParams.length > 0);
    expect(queried.map((r) => r.path)).toContain('/api/v1/conversations/{id}/messages');
    for (const r of queried) {
      const params = fc.tuple(...r.pathParams.map(() => paramValue(r.path)));
      const query = fc.record(Object.fromEntries(r.queryParams.map((q) => [q, value])), { requiredKeys: [] });
      const failure = await fuzzRoute(`${r.method.toUpperCase()} ${r.path} (query)`, fc.tuple(params, query), ([p, q]) =>
        t.request({
          method: r.method.toUpperCase() as 'GET',
          url: `${fillPath(r.path, p as string[])}?${new URLSearchParams(q as Record<string, string>).toString()}`,
          headers: r.security.includes('deviceJwt') ? agent.auth : owner.auth,
        }),
      );
      if (failure) failures.push(failure);
    }
    expect(failures, failures.join('\n')).toEqual([]);
  });

  describe('framework errors are {detail} too', () => {
    const post = (payload: string, contentType: string, url = '/api/v1/topics') =>
      t.request({ method: 'POST', url, headers: { ...owner.auth, 'content-type': contentType }, payload });

    it('malformed JSON → 400 {detail}', async () => {
      for (const payload of ['{"group_id":', '{name: "x"}', "{'a': 1}", '[1,2', '{"a":1}}', '\u0000', '{"__proto__": {"polluted": true}}']) {
        const res = await post(payload, 'application/json');
        expect(res.status, payload).toBe(400);
        expect(typeof res.body.detail).toBe('string');
      }
    });

    it('an empty body with content-type application/json → 400 {detail}', async () => {
      const res = await post('', 'application/json');
      expect(res.status).toBe(400);
      expect(typeof res.body.detail).toBe('string');
    });

    it('unknown routes → 404 {detail}', async () => {
      for (const [method, url] of [
        ['GET', '/api/v1/nope'],
        ['POST', '/api/v1/nope'],
        ['GET', '/nope'],
        ['DELETE', '/api/v1/topics'],
        ['GET', '/api/v2/conversations'],
      ] as const) {
        const res = await t.request({ method, url, headers: owner.auth });
        expect(res.status, `${method} ${url}`).toBe(404);
        expect(typeof res.body.detail).toBe('string');
      }
    });

    it('a body that is not JSON (xml, form, multipart) → 415 {detail}', async () => {
      for (const [ct, payload] of [
        ['application/xml', '<topic/>'],
        ['application/x-www-form-urlencoded', 'name=x'],
        ['multipart/form-data; boundary=xyz', '--xyz--'],
        ['image/png', 'PNG'],
      ]) {
        const res = await post(payload!, ct!);
        expect(res.status, ct).toBe(415);
        expect(typeof res.body.detail).toBe('string');
      }
    });

    it('a text/plain body to a JSON route → 415 {detail}', async () => {
      const res = await post(JSON.stringify({ group_id: agent.groupId, name: 'as text' }), 'text/plain');
      expect(res.status).toBe(415);
      expect(typeof res.body.detail).toBe('string');
    });

    it('a body over the size limit → 413 {detail}', async () => {
      const res = await post(JSON.stringify({ group_id: agent.groupId, name: 'x'.repeat(2 * 1024 * 1024) }), 'application/json');
      expect(res.status).toBe(413);
      expect(typeof res.body.detail).toBe('string');
    });

    it('a malformed URL (bad percent-encoding) → 400 {detail}', async () => {
      for (const url of ['/api/v1/topics/%E0%A4%A', '/api/v1/conversations/%ZZ/messages']) {
        const res = await t.request({ method: 'GET', url, headers: owner.auth });
        expect(res.status, url).toBe(400);
        expect(typeof res.body?.detail, `${url}: ${JSON.stringify(res.body)}`).toBe('string');
      }
    });

    it('text fields containing NUL characters answer 400, never 500', async () => {
      const results: string[] = [];
      for (const [url, payload] of [
        ['/api/v1/tenants', { name: 'a\u0000b' }],
        ['/api/v1/invites', { label: 'a\u0000b' }],
        ['/api/v1/topics', { group_id: agent.groupId, name: 'a\u0000b' }],
      ] as const) {
        const res = await t.request({ method: 'POST', url, headers: owner.auth, payload });
        results.push(`${url} ${res.status} ${typeof res.body?.detail}`);
      }
      const rename = await t.request({ method: 'PATCH', url: `/api/v1/topics/${agent.defaultTopicId}`, headers: owner.auth, payload: { name: '\u0000' } });
      results.push(`PATCH topic ${rename.status} ${typeof rename.body?.detail}`);
      expect(results).toEqual(['/api/v1/tenants 400 string', '/api/v1/invites 400 string', '/api/v1/topics 400 string', 'PATCH topic 400 string']);
    });
  });
});

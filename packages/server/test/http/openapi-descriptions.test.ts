/**
 * Every operation of the OpenAPI document (`/api/v1/openapi.json`) is described, not only
 * summarised: a description distinct from the summary, saying who may call it (the wording of its
 * row's auth mode, @parley/protocol `AUTH_CALLERS`) and naming, with why, exactly the error
 * statuses its `responses` document — no documented error left unexplained, no explained error
 * left undocumented.
 */
import { AUTH_CALLERS, commonErrors, ROUTES, type RouteContract } from '@parley/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../../testing/harness.js';

interface Operation {
  summary?: string;
  description?: string;
  responses?: Record<string, unknown>;
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

/**
 * The HTTP error statuses a text names: a 4xx or 5xx number followed by the words or marks that
 * introduce a status's reason (`404 when …`, `409 for …`, `**429**:`, `400 \`invalidDid\``), so
 * a limit such as "at most 500 unclaimed" is not read as a status.
 */
function statusesNamedIn(text: string): Set<number> {
  const named = new Set<number>();
  for (const m of text.matchAll(/\b([45]\d\d)(?=\s+(?:when|for|unless|also|while|only|if|with|`)|\*\*|[,;.:)])/g)) named.add(Number(m[1]));
  return named;
}

const errorStatuses = (op: Operation) =>
  Object.keys(op.responses ?? {})
    .map(Number)
    .filter((s) => s >= 400);

describe('OpenAPI operation descriptions', () => {
  let t: TestApp;
  let ops: { key: string; row: RouteContract; op: Operation }[];

  beforeAll(async () => {
    t = await startApp();
    const res = await t.request({ method: 'GET', url: '/api/v1/openapi.json' });
    expect(res.status).toBe(200);
    const paths = res.body.paths as Record<string, Record<string, Operation>>;
    ops = Object.values(ROUTES as Record<string, RouteContract>)
      .filter((row) => !row.hide)
      .map((row) => ({ key: `${row.method} ${row.path}`, row, op: paths[row.path]?.[row.method.toLowerCase()] as Operation }));
    // Every documented operation is a row of the table (the drift test checks the converse too).
    const documented = Object.entries(paths).flatMap(([path, byMethod]) => METHODS.filter((m) => byMethod[m]).map((m) => `${m.toUpperCase()} ${path}`));
    expect(documented.sort()).toEqual(ops.map((o) => o.key).sort());
  });
  afterAll(() => t?.close());

  it('every operation has a description distinct from its summary, saying who may call it', () => {
    const problems: string[] = [];
    for (const { key, row, op } of ops) {
      const description = op?.description?.trim() ?? '';
      if (!description) problems.push(`${key}: no description`);
      else if (description === op.summary || row.description.trim() === row.summary) problems.push(`${key}: the description repeats the summary`);
      if (!description.includes(`**Who may call:** ${AUTH_CALLERS[row.auth]}`)) problems.push(`${key}: does not say who may call it (${row.auth})`);
      if (row.description.trim().length < 40) problems.push(`${key}: the row's own description is too short to say what the operation does`);
    }
    expect(problems).toEqual([]);
  });

  it('the statuses a description names are exactly the error statuses its responses document', () => {
    const problems: string[] = [];
    for (const { key, op } of ops) {
      const named = statusesNamedIn(op.description ?? '');
      const documented = new Set(Object.keys(op.responses ?? {}).map(Number));
      for (const s of errorStatuses(op)) if (!named.has(s)) problems.push(`${key}: ${s} is documented but its description does not say when`);
      for (const s of named) if (!documented.has(s)) problems.push(`${key}: the description names ${s}, which its responses do not document`);
    }
    expect(problems).toEqual([]);
  });

  it("a row's own description explains every error the common part does not (authentication, validation, body size, rate limit)", () => {
    const problems: string[] = [];
    for (const { key, row } of ops) {
      const common = new Set(Object.keys(commonErrors(row)).map(Number));
      const own = statusesNamedIn(row.description);
      for (const s of row.errors) if (!common.has(s) && !own.has(s)) problems.push(`${key}: ${s} is in errors but the row's description does not say when`);
    }
    expect(problems).toEqual([]);
  });

  it('the common errors follow the auth mode and the inputs', () => {
    const doc = (method: string, path: string) => ops.find((o) => o.key === `${method} ${path}`)!.op;
    // A route without credentials answers no 401/403 of authentication; an owner route does.
    expect(Object.keys(doc('GET', '/api/v1/capabilities').responses ?? {})).not.toContain('401');
    expect(doc('GET', '/api/v1/invites').description).toMatch(/\*\*401\*\*: no credential/);
    expect(doc('GET', '/api/v1/invites').description).toMatch(/\*\*403\*\*: .*X-Tenant-Id/);
    // A public route refuses only a credential that is sent.
    expect(doc('GET', '/api/v1/hub/search').description).toMatch(/\*\*401\*\*: a credential was sent/);
    // Every route is behind the global rate limit; only routes with a body can be too large.
    for (const { key, row, op } of ops) {
      expect(Object.keys(op.responses ?? {}), key).toContain('429');
      if (row.body || row.contentTypes) expect(Object.keys(op.responses ?? {}), key).toContain('413');
    }
  });
});

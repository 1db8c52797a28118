/**
 * Ingest group commit (modules/telemetry/service.ts): export requests of one
 * tenant arriving together share one INSERT, each span lands on its own request's device, and a
 * request holding a value PostgreSQL refuses fails alone (400) while the others of its batch are
 * stored.
 */
import { randomBytes } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTenantWriter, type TenantWrite, type TenantWriter } from '../../src/db/tenant-writer.js';
import { isDataException } from '../../src/db/errors.js';
import { TelemetryService } from '../../src/modules/telemetry/service.js';
import type { ExportRequestJson } from '../../src/modules/telemetry/otlp.js';
import { activeAgent, newOwner, type Agent, type Owner } from '../../testing/flows.js';
import { startApp, type TestApp } from '../../testing/harness.js';

const hex = (n: number) => randomBytes(n).toString('hex');
const BASE = 1_700_000_000_000n * 1_000_000n;

/** A request of `n` spans named `name`, with `attr` as a string attribute of each. */
function request(name: string, n: number, attr = 'ok'): ExportRequestJson {
  const spans = Array.from({ length: n }, (_, i) => ({
    traceId: hex(16),
    spanId: hex(8),
    name,
    kind: 1,
    startTimeUnixNano: String(BASE + BigInt(i) * 1_000_000n),
    endTimeUnixNano: String(BASE + BigInt(i + 1) * 1_000_000n),
    attributes: [{ key: 'note', value: { stringValue: attr } }],
    status: { code: 0 },
  }));
  return { resourceSpans: [{ resource: { attributes: [{ key: 'service.name', value: { stringValue: name } }] }, scopeSpans: [{ spans }] }] } as ExportRequestJson;
}

describe('ingest group commit', () => {
  let t: TestApp;
  let owner: Owner;
  let a: Agent;
  let b: Agent;
  /** The statements written, by the number of devices' requests they carried. */
  let writes: number;
  let service: TelemetryService;
  let real: TenantWriter;
  beforeAll(async () => {
    t = await startApp();
    owner = await newOwner(t);
    a = await activeAgent(t, owner);
    b = await activeAgent(t, owner);
    // The app's kind of writer: pipelined and chained connections on PostgreSQL, drizzle on PGlite.
    real = openTenantWriter(t.app.parley.database);
    const counting: TenantWriter = {
      write: <R>(w: TenantWrite) => {
        writes++;
        return real.write<R>(w);
      },
      close: () => real.close(),
    };
    service = new TelemetryService({ db: t.app.parley.database.db, writer: counting, listDefault: 50, listMax: 200 });
  });
  afterAll(async () => {
    await service.drain();
    await real.close();
    await t.close();
  });

  /** name → count of the agent's stored spans (owner query). */
  const stored = async (agent: Agent) => {
    const res = await t.request({ method: 'GET', url: `/api/v1/telemetry/${agent.deviceId}?limit=200`, headers: owner.auth });
    expect(res.status).toBe(200);
    const counts: Record<string, number> = {};
    for (const s of res.body.spans as { name: string; resource: Record<string, unknown>; device_id: string }[]) {
      expect(s.device_id).toBe(agent.deviceId);
      expect(s.resource).toEqual({ 'service.name': s.name });
      counts[s.name] = (counts[s.name] ?? 0) + 1;
    }
    return counts;
  };

  it('stores concurrent requests of two devices in one statement, each span on its own device and resource', async () => {
    writes = 0;
    const counts = await Promise.all([
      service.ingest(owner.tenantId, a.deviceId, request('batch.a1', 3)),
      service.ingest(owner.tenantId, b.deviceId, request('batch.b1', 2)),
      service.ingest(owner.tenantId, a.deviceId, request('batch.a2', 4)),
    ]);
    expect(counts).toEqual([3, 2, 4]);
    expect(writes).toBe(1);
    expect(await stored(a)).toEqual({ 'batch.a1': 3, 'batch.a2': 4 });
    expect(await stored(b)).toEqual({ 'batch.b1': 2 });
  });

  it('a request with a value PostgreSQL refuses (NUL in text) fails alone; the others of its batch are stored', async () => {
    writes = 0;
    const outcomes = await Promise.allSettled([
      service.ingest(owner.tenantId, a.deviceId, request('nul.ok1', 2)),
      service.ingest(owner.tenantId, b.deviceId, request('nul.bad', 2, 'a\u0000b')),
      service.ingest(owner.tenantId, b.deviceId, request('nul.ok2', 1)),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(isDataException((outcomes[1] as PromiseRejectedResult).reason)).toBe(true);
    // The shared statement failed, then each request was written alone.
    expect(writes).toBe(4);
    expect((await stored(a))['nul.ok1']).toBe(2);
    const onB = await stored(b);
    expect(onB['nul.ok2']).toBe(1);
    expect(onB['nul.bad']).toBeUndefined();
  });

  it('stores times to the exact microsecond far in the future, and an absent parent and status message as null', async () => {
    // 9999-12-31T23:59:59.999Z, the latest time accepted (21 digits of nanoseconds): a millisecond
    // count times interval '1 millisecond' (floating point) would store .999008.
    const last = 253_402_300_799_999n;
    const body = request('edge.time', 1);
    const span = body.resourceSpans![0]!.scopeSpans![0]!.spans![0]! as Record<string, unknown>;
    span.startTimeUnixNano = String((last - 1_500n) * 1_000_000n);
    span.endTimeUnixNano = String(last * 1_000_000n);
    expect(await service.ingest(owner.tenantId, a.deviceId, body)).toBe(1);
    const { rows } = (await t.app.parley.database.db.execute(
      sql`select (extract(epoch from start_time) * 1000000)::bigint::text as start_us, (extract(epoch from end_time) * 1000000)::bigint::text as end_us,
                 duration_us::text as duration_us, parent_span_id, status_message from telemetry_spans where name = 'edge.time'`,
    )) as unknown as { rows: Record<string, unknown>[] };
    expect(rows).toEqual([{ start_us: String((last - 1_500n) * 1000n), end_us: String(last * 1000n), duration_us: '1500000', parent_span_id: null, status_message: null }]);
  });

  it('over HTTP the refused request answers 400 in the {detail} shape', async () => {
    const res = await t.request({ method: 'POST', url: '/api/v1/telemetry/ingest', headers: a.auth, payload: request('http.bad', 1, 'x\u0000y') as object });
    expect(res.status).toBe(400);
    expect(typeof res.body.detail).toBe('string');
  });
});

/**
 * PostgreSQL restarting under load (defect: the process died on an unhandled pooled-client
 * `error`). The test runs its OWN PostgreSQL (initdb + pg_ctl in a temp dir, a free port on
 * 127.0.0.1, as a non-root user when run as root), builds the app against it, keeps requests in
 * flight, restarts PostgreSQL (`pg_ctl restart -m fast`) and shows: no 500, some requests answered
 * 503 `{detail}` while it was down, requests succeed again afterwards, and nothing escaped as an
 * uncaught exception or unhandled rejection. Skipped (with that reason in its name) only when no
 * PostgreSQL server binaries are installed; it runs once, in the pglite project (it needs no
 * TEST_DATABASE_URL).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { activeAgent, newOwner, registerOwnerDevice, type Agent, type Owner, type OwnerDevice } from '../../testing/flows.js';
import { backend, startApp, type TestApp } from '../../testing/harness.js';
import { findPgBin, startOwnPostgres, type OwnPostgres } from '../../testing/own-services.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const bin = findPgBin();

describe.skipIf(!bin || backend !== 'pglite')(
  !bin ? 'PostgreSQL restart under load (SKIPPED: no PostgreSQL server binaries — initdb/pg_ctl — found via pg_config or /usr/lib/postgresql/*/bin)' : 'PostgreSQL restart under load',
  () => {
    let pgServer: OwnPostgres | undefined;
    let t: TestApp | undefined;
    let owner: Owner;
    let od: OwnerDevice;
    let agent: Agent;
    const escaped: unknown[] = [];
    const onEscape = (err: unknown) => escaped.push(err);

    beforeAll(async () => {
      pgServer = await startOwnPostgres(bin!);
      process.on('uncaughtException', onEscape);
      process.on('unhandledRejection', onEscape);
      t = await startApp({ listen: true, databaseUrl: pgServer.url(), env: { RATE_LIMITS: 'off', DATABASE_POOL_MAX: '8' } });
      owner = await newOwner(t);
      od = await registerOwnerDevice(t, owner);
      agent = await activeAgent(t, owner);
    }, 120_000);

    afterAll(async () => {
      await t?.close();
      process.off('uncaughtException', onEscape);
      process.off('unhandledRejection', onEscape);
      pgServer?.destroy();
    }, 60_000);

    it('keeps serving: in-flight requests answer 503 {detail} while it restarts, none 500, then succeed again', async () => {
      const app = t!;
      const headers = { ...owner.auth, 'content-type': 'application/json' };
      const calls = [
        () => fetch(`${app.baseUrl}/api/v1/devices`, { headers: owner.auth }),
        () =>
          fetch(`${app.baseUrl}/api/v1/conversations/${agent.conversationId}/messages`, {
            method: 'POST',
            headers: { ...headers, 'x-device-id': od.deviceId },
            body: JSON.stringify({ header_blob: 'aGRy', ciphertext: 'AQID' }),
          }),
        () => fetch(`${app.baseUrl}/api/v1/devices/${agent.deviceId}/pending`, { headers: agent.auth }),
      ];
      const statuses: { at: number; status: number; body: unknown }[] = [];
      let stop = false;
      const worker = async (i: number) => {
        for (let n = i; !stop; n++) {
          const res = await calls[n % calls.length]!();
          const body = await res.json().catch(() => undefined);
          statuses.push({ at: Date.now(), status: res.status, body });
        }
      };
      const workers = Array.from({ length: 6 }, (_, i) => worker(i));

      // under load before the restart: everything succeeds
      const deadlineBefore = Date.now() + 10_000;
      while (statuses.filter((s) => s.status < 300).length < 30 && Date.now() < deadlineBefore) await sleep(20);
      expect(statuses.every((s) => s.status < 300), JSON.stringify(statuses.filter((s) => s.status >= 300).slice(0, 3))).toBe(true);

      const restartedAt = Date.now();
      await pgServer!.restart();
      const upAt = Date.now();
      // requests succeed again (poll with a deadline)
      const deadline = Date.now() + 30_000;
      while (!statuses.some((s) => s.at > upAt && s.status < 300) && Date.now() < deadline) await sleep(50);
      const okAfter = () => statuses.filter((s) => s.at > upAt && s.status < 300).length;
      const want = okAfter() + 20;
      while (okAfter() < want && Date.now() < deadline) await sleep(20);
      stop = true;
      await Promise.all(workers);

      const failures = statuses.filter((s) => s.status >= 300);
      expect(failures.filter((s) => s.status >= 500 && s.status !== 503), JSON.stringify(failures.slice(0, 3))).toEqual([]);
      expect(failures.every((s) => s.status === 503)).toBe(true);
      for (const f of failures) expect(f.body).toEqual({ detail: expect.any(String) });
      expect(failures.length, 'some requests in flight during the restart answered 503').toBeGreaterThan(0);
      expect(failures.every((f) => f.at >= restartedAt)).toBe(true);
      expect(okAfter()).toBeGreaterThanOrEqual(20);
      expect(escaped).toEqual([]);
      // no pooled connection was lost: once the load stops, every client is back in the pool
      const raw = app.app.parley.database.raw;
      if (raw.kind !== 'pg') throw new Error('expected a PostgreSQL pool');
      const idleBy = Date.now() + 10_000;
      while (raw.pool.idleCount !== raw.pool.totalCount && Date.now() < idleBy) await sleep(50);
      expect({ total: raw.pool.totalCount, idle: raw.pool.idleCount, waiting: raw.pool.waitingCount }).toEqual({ total: raw.pool.totalCount, idle: raw.pool.totalCount, waiting: 0 });
      // the same app instance still serves every kind of request
      const again = await app.request({ method: 'GET', url: '/api/v1/devices', headers: owner.auth });
      expect(again.status).toBe(200);
    }, 90_000);
  },
);

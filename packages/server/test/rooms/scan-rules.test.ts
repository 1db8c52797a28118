/**
 * Client-side scan rules (contract §4.14, §6.1 rule 5): the built-in version 0, owner saves as new
 * versions (old ones kept), patterns that do not compile are 400, readers (device JWT, owner),
 * owner-only writes, tenant isolation, the scan_rules_enabled setting, and the SDK scanner built
 * from the served set.
 */
import { describe, expect, it } from 'vitest';
import { scannerFromRules } from '@parley/sdk';
import { appWithAgent, newOwner } from '../../testing/flows.js';

const rule = (over: Record<string, unknown> = {}) => ({ id: 'secret', name: 'Secret word', pattern: 'hunter2', action: 'block', severity: 'high', ...over });

describe('scan rules', () => {
  const s = appWithAgent();

  const get = (headers: Record<string, string> = s.agent.auth) => s.t.request({ method: 'GET', url: '/api/v1/scan-rules', headers });
  const save = (body: unknown, headers: Record<string, string> = s.owner.auth) => s.t.request({ method: 'POST', url: '/api/v1/scan-rules', headers, payload: body as object });

  it('serves the built-in version 0 to agents and owners of a tenant that saved none; its patterns compile and block secrets', async () => {
    const res = await get();
    expect(res.status).toBe(200);
    expect(res.body.version).toBe(0);
    expect(res.body.updated_at).toBeNull();
    expect(res.body.enabled).toBe(true);
    expect(res.body.rules.length).toBeGreaterThan(3);
    expect((await get(s.owner.auth)).body).toEqual(res.body);
    const warned: string[] = [];
    const scan = scannerFromRules(res.body, { onWarn: (w) => warned.push(w.rule.id) });
    const meta = { conversation_id: 'c' };
    expect(await scan('my key is AKIAABCDEFGHIJKLMNOP', meta)).toMatchObject({ blocked: true });
    expect(await scan(new TextEncoder().encode('-----BEGIN OPENSSH PRIVATE KEY-----'), meta)).toMatchObject({ blocked: true });
    expect(await scan('mail me at bob@example.com', meta)).toEqual({ blocked: false });
    expect(warned).toEqual(['email']);
    expect(await scan('hello', meta)).toEqual({ blocked: false });
  });

  it('saves new versions (version + 1, old ones kept) and serves the newest', async () => {
    const v1 = await save({ rules: [rule()] });
    expect(v1.status).toBe(201);
    expect(v1.body).toMatchObject({ version: 1, enabled: true, rules: [rule()] });
    expect(typeof v1.body.updated_at).toBe('string');
    const v2 = await save({ rules: [rule(), rule({ id: 'ssn', pattern: '\\d{3}-\\d{2}-\\d{4}', flags: 'u', action: 'warn', severity: 'low' })] });
    expect(v2.body.version).toBe(2);
    const cur = await get();
    expect(cur.body.version).toBe(2);
    expect(cur.body.rules).toHaveLength(2);
    const versions = await s.t.request({ method: 'GET', url: '/api/v1/scan-rules/versions', headers: s.owner.auth });
    expect(versions.status).toBe(200);
    expect(versions.body.versions.map((v: any) => [v.version, v.rule_count])).toEqual([
      [2, 2],
      [1, 1],
    ]);
    expect((await scannerFromRules(cur.body)('password hunter2', { conversation_id: 'c' })).blocked).toBe(true);
  });

  it('refuses bad rule sets with 400: invalid regex, duplicate ids, unknown keys, bad flags, too-long pattern', async () => {
    const invalid = await save({ rules: [rule({ pattern: '(unclosed' })] });
    expect(invalid.status).toBe(400);
    expect(invalid.body.detail).toContain('secret');
    const bad: unknown[] = [
      {},
      { rules: 'x' },
      { rules: [rule(), rule()] },
      { rules: [rule({ colour: 'red' })] },
      { rules: [rule({ flags: 'g' })] },
      { rules: [rule({ flags: 'uv' })] },
      { rules: [rule({ pattern: 'a'.repeat(1001) })] },
      { rules: [rule({ action: 'delete' })] },
      { rules: [rule({ id: 'Bad Id' })] },
      { rules: [rule()], extra: 1 },
    ];
    for (const body of bad) expect((await save(body)).status, JSON.stringify(body).slice(0, 80)).toBe(400);
    expect((await get()).body.version).toBe(2);
  });

  it('needs auth; writes and the version list are owner only (403 with a device token)', async () => {
    expect((await s.t.request({ method: 'GET', url: '/api/v1/scan-rules' })).status).toBe(401);
    expect((await s.t.request({ method: 'POST', url: '/api/v1/scan-rules', payload: { rules: [] } })).status).toBe(401);
    expect((await save({ rules: [] }, s.agent.auth)).status).toBe(403);
    expect((await s.t.request({ method: 'GET', url: '/api/v1/scan-rules/versions', headers: s.agent.auth })).status).toBe(403);
  });

  it('keeps tenants apart', async () => {
    const other = await newOwner(s.t, 'Other');
    expect((await get(other.auth)).body.version).toBe(0);
    expect((await save({ rules: [] }, other.auth)).body.version).toBe(1);
    expect((await get()).body.version).toBe(2);
    expect((await s.t.request({ method: 'GET', url: '/api/v1/scan-rules/versions', headers: other.auth })).body.versions).toHaveLength(1);
  });

  it('serves an empty set while the scan_rules_enabled setting is off', async () => {
    await s.t.request({ method: 'PATCH', url: '/api/v1/settings', headers: s.owner.auth, payload: { scan_rules_enabled: false } });
    expect((await get()).body).toMatchObject({ version: 2, rules: [], enabled: false });
    await s.t.request({ method: 'PATCH', url: '/api/v1/settings', headers: s.owner.auth, payload: { scan_rules_enabled: null } });
    expect((await get()).body).toMatchObject({ version: 2, enabled: true });
  });
});

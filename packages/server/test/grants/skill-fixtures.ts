/**
 * Fixtures of the skill policy pipeline tests (design §8.6, §8.7): agents with a hub identity at a
 * given tier and score, policies and SPT grants, bound to one test app and default owner.
 */
import { eq } from 'drizzle-orm';
import { expect } from 'vitest';
import { hubIdentities } from '../../src/db/schema/index.js';
import { activeAgent, type Agent, type Owner } from '../../testing/flows.js';
import type { TestApp } from '../../testing/harness.js';
import { hubOwnerKey } from '../../testing/keys.js';

/** An ACTIVE agent and the address of its hub identity. */
export interface Subject {
  agent: Agent;
  address: string;
}

let seq = 0;

/**
 * Helpers over the app and default owner `get()` answers (read at each call, so they can be built
 * before `beforeAll` runs); `prefix` names the hub addresses.
 */
export function skillFixtures(get: () => { t: TestApp; owner: Owner }, prefix: string) {
  const addr = () => `${prefix}-${Date.now().toString(36)}-${++seq}`;
  const setIdentity = (address: string, set: Partial<typeof hubIdentities.$inferInsert>) =>
    get().t.app.parley.database.db.update(hubIdentities).set(set).where(eq(hubIdentities.hubAddress, address));
  return {
    /** A hub address unique to this run. */
    addr,
    setIdentity,
    /** A skill name unique to this run. */
    skillName: (s: string) => `${s}-${++seq}`,
    /** An ACTIVE agent of `owner` with a hub identity at `tier` and `score` (null = none yet). */
    async subject(owner: Owner = get().owner, tier = 'unverified', score: number | null = null): Promise<Subject> {
      const { t } = get();
      const agent = await activeAgent(t, owner);
      const address = addr();
      const res = await t.request({ method: 'POST', url: '/api/v1/hub/identities', headers: owner.auth, payload: { hub_address: address, display_name: 'Agent', device_id: agent.deviceId, public_key: hubOwnerKey() } });
      expect(res.status).toBe(201);
      await setIdentity(address, { trustTier: tier, trustScore: score });
      return { agent, address };
    },
    /** Create a policy; answers its id. */
    async policy(payload: Record<string, unknown>, owner: Owner = get().owner): Promise<string> {
      const res = await get().t.request({ method: 'POST', url: '/api/v1/policies', headers: owner.auth, payload: { name: `p${++seq}`, ...payload } });
      expect(res.status).toBe(201);
      return res.body.policy_id as string;
    },
    /** Issue an SPT for `skill` to the subject's device (owner on its behalf). */
    async grant(s: Subject, skill: string, owner: Owner = get().owner): Promise<{ token: string; jti: string }> {
      const res = await get().t.request({ method: 'POST', url: '/api/v1/grants', headers: owner.auth, payload: { skill, device_id: s.agent.deviceId } });
      expect(res.status).toBe(201);
      return res.body as { token: string; jti: string };
    },
  };
}

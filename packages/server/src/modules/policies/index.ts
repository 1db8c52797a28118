/**
 * Policies and held messages (contract §4.7, §4.8; design §8.4): the area's public surface. Rooms,
 * A2A and the marketplace consult {@link PolicyService} as their `PolicyDecider` and register the
 * releasers of their held messages on it; the skill pipeline (grants) evaluates rules with the engine.
 */
import { API_PREFIX, type Area, type Platform } from '../../http/area.js';
import type { SettingsService } from '../settings/index.js';
import { policyRoutes } from './routes.js';
import { PolicyService } from './service.js';

export type { Decided, RatesOf } from './decide.js';
export { TIERS, compilePolicies, evaluate, stricter } from './engine.js';
export type { Evaluation, EvaluationContext, PolicyAction, PolicyRule, Tier } from './engine.js';
export { listPolicies, policyEpochOf, toPolicyRule, wipeHeldPayloads } from './repo.js';
export { PolicyService } from './service.js';
export type { DecideItem, HeldRecord, HeldReleaser, HoldInput, PolicyDecider } from './types.js';

/** The policies area and its service. */
export interface PoliciesArea extends Area {
  policies: PolicyService;
}

/** Policies whose held messages live as long as the tenant's `held_message_ttl_hours` setting says. */
export function createPolicies(d: Pick<Platform, 'db' | 'notifier' | 'config' | 'log'> & { settings: Pick<SettingsService, 'read'> }): PoliciesArea {
  const heldTtlMsOf = async (tx: Parameters<SettingsService['read']>[0], tenantId: string) => (await d.settings.read(tx, tenantId)).held_message_ttl_hours * 3_600_000;
  const policies = new PolicyService({ db: d.db, notifier: d.notifier, heldTtlMs: d.config.heldMessageTtlMs, heldTtlMsOf, log: d.log });
  return {
    policies,
    async routes(app) {
      await app.register(policyRoutes, { prefix: API_PREFIX, policies });
    },
  };
}

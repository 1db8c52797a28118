/**
 * Registered capabilities of hub identities (contract §2.8, §4.10): name, version, description, an
 * `input_schema` that must be a valid JSON Schema (json-schema.ts), an optional SLA, and the
 * `certification_tier` that certification sets (certify.ts). Owner routes: the identity is read
 * in the owner's tenant, so another tenant's address answers 404.
 */
import { randomUUID } from 'node:crypto';
import type { CapabilitySla, HubCapability, HubCapabilityInput, TrustTier } from '@parley/protocol';
import type { Db } from '../../db/client.js';
import { withTenant } from '../../db/tenant.js';
import { conflict } from '../../lib/errors.js';
import { appendAudit } from '../audit/index.js';
import { assertJsonSchema } from './json-schema.js';
import * as repo from './repo.js';
import { ownIdentityAt } from './service.js';

/** A stored capability as the wire shows it (`HubCapability`); also the marketplace's listing capabilities. */
export const toOut = (c: repo.HubCapabilityRow): HubCapability => ({
  name: c.name,
  version: c.version,
  description: c.description,
  input_schema: c.inputSchema as Record<string, unknown>,
  sla: (c.sla as CapabilitySla | null) ?? null,
  certification_tier: c.certificationTier as TrustTier,
  registered_at: c.registeredAt.toISOString(),
});

export class HubCapabilityService {
  constructor(private readonly db: Db) {}

  /** The identity's capabilities, oldest first. @throws 404 unknown or another tenant's address. */
  list(tenantId: string, address: string): Promise<HubCapability[]> {
    return withTenant(this.db, tenantId, async (tx) => {
      const identity = await ownIdentityAt(tx, address);
      return (await repo.listCapabilities(tx, identity.id)).map(toOut);
    });
  }

  /**
   * Register a capability; it starts `unverified` (the next certify run certifies it). The
   * identity's search document is refreshed in the same transaction, which also records
   * `hub.capability_registered` (subject: the identity id; data: address, name, version) by `actor`.
   * @throws 400 `input_schema` is not a valid JSON Schema (the detail names the problem);
   *   404 unknown or another tenant's address; 409 the identity already has this name + version.
   */
  async register(tenantId: string, address: string, input: HubCapabilityInput, actor = 'owner'): Promise<HubCapability> {
    assertJsonSchema(input.input_schema);
    try {
      return await withTenant(this.db, tenantId, async (tx) => {
        const identity = await ownIdentityAt(tx, address);
        const [row] = await repo.insertCapability(tx, {
          id: randomUUID(),
          tenantId,
          identityId: identity.id,
          name: input.name,
          version: input.version,
          description: input.description ?? null,
          inputSchema: input.input_schema,
          sla: input.sla ?? null,
        });
        await repo.refreshSearchDocument(tx, identity.id);
        await appendAudit(tx, tenantId, {
          type: 'hub.capability_registered',
          actor,
          subject: identity.id,
          data: { hub_address: identity.hubAddress, capability_id: row!.id, name: input.name, version: input.version },
        });
        return toOut(row!);
      });
    } catch (err) {
      if (repo.isUniqueViolation(err, 'hub_capabilities_name_idx')) throw conflict(`capability ${input.name} ${input.version} is already registered`);
      throw err;
    }
  }
}

/**
 * Tenant settings (contract §4.14; design §8.22): a flat JSON object, validated field by field.
 * Only the keys an owner set are stored (`tenant_settings.settings`); reads fill in the defaults,
 * so a changed platform default (e.g. HELD_MESSAGE_TTL_HOURS) reaches every tenant that did not
 * override it. `PATCH` sets the given keys; `null` resets a key to its default.
 *
 * Every setting here is honoured by the service (docs/decisions.md "Tenant settings"):
 * - `held_message_ttl_hours` (integer 1..720): how long a held message awaits a decision
 *   (PolicyService.holdAll reads it through {@link SettingsService.read});
 * - `default_room_security_level` (`standard` | `strict`): the level of a room created without one
 *   (`createRoom`, rooms/management.ts);
 * - `scan_rules_enabled` (boolean): when false `GET /scan-rules` answers an empty rule set, so
 *   clients stop scanning outbound plaintext;
 * - `model_prices` (`{model: {input_cents_per_mtok, output_cents_per_mtok}}`, `*` = any other
 *   model; default `{}`): the price table that turns agents' token usage into cents for spend caps
 *   in cents (modules/spend; docs/decisions.md "Spend caps"). A PATCH replaces the whole table.
 * - `read_receipts_enabled` (boolean, default {@link READ_RECEIPTS_DEFAULT}): when false no device
 *   of the tenant sends read receipts — reads are neither stored nor forwarded (modules/receipts,
 *   which reads the stored override in its read statement; docs/decisions.md "Delivery and read
 *   receipts").
 * - `require_post_quantum` (boolean, default {@link REQUIRE_POST_QUANTUM_DEFAULT}): honoured by the
 *   tenant's devices, which learn it from their device settings (`GET /devices/self/settings`,
 *   modules/devices) and then refuse classical X3DH (PQXDH rev. 3 §3.3) and non-hybrid MLS
 *   ciphersuites (RFC 9420 §17.1). The service only stores and serves it: it cannot see sessions.
 * - `key_transparency_witnesses` (C2SP cosignature/v1 vkeys, at most 10, default `[]`) and
 *   `key_transparency_min_cosignatures` (integer 0..10, at most the number of witnesses, default
 *   0): the tenant's witness policy, served by `GET /key-directory` (design §8.39); the tenant's
 *   clients refuse a directory checkpoint without that many cosignatures by those witnesses. Each
 *   vkey's key id is checked against its name and key (lib/cosignature.ts).
 */
import type { TenantSettings, TenantSettingsPatch } from '@parley/protocol';
import type { Db, Tx } from '../../db/client.js';
import { withTenant } from '../../db/tenant.js';
import { parseWitnessVkey } from '../../lib/cosignature.js';
import { badRequest } from '../../lib/errors.js';
import { appendAudit } from '../audit/index.js';
import * as repo from './repo.js';

/** The default of the `read_receipts_enabled` tenant setting (read receipts on, as in every messenger). */
export const READ_RECEIPTS_DEFAULT = true;

/** The default of the `require_post_quantum` tenant setting (classical sessions allowed, for peers without PQ keys). */
export const REQUIRE_POST_QUANTUM_DEFAULT = false;

/** The platform defaults, given the configured held-message TTL (HELD_MESSAGE_TTL_HOURS). */
export function defaultSettings(heldTtlMs: number): TenantSettings {
  return {
    held_message_ttl_hours: Math.round(heldTtlMs / 3_600_000),
    default_room_security_level: 'standard',
    scan_rules_enabled: true,
    model_prices: {},
    read_receipts_enabled: READ_RECEIPTS_DEFAULT,
    require_post_quantum: REQUIRE_POST_QUANTUM_DEFAULT,
    key_transparency_witnesses: [],
    key_transparency_min_cosignatures: 0,
  };
}

/**
 * The checks the route schema cannot make (design §8.39): every witness vkey parses with a key id
 * matching its name and key, and the cosignatures required do not exceed the witnesses listed.
 * @throws 400 naming the setting
 */
function checkWitnessPolicy(s: TenantSettings): void {
  const bad = s.key_transparency_witnesses.findIndex((v) => !parseWitnessVkey(v));
  if (bad >= 0) throw badRequest(`key_transparency_witnesses[${bad}] is not a C2SP cosignature/v1 vkey whose key id matches its name and key`);
  if (s.key_transparency_min_cosignatures > s.key_transparency_witnesses.length) {
    throw badRequest(`key_transparency_min_cosignatures (${s.key_transparency_min_cosignatures}) exceeds the number of key_transparency_witnesses (${s.key_transparency_witnesses.length})`);
  }
}

export class SettingsService {
  private readonly keys: (keyof TenantSettings)[];

  /** @param defaults the value of every setting a tenant did not set ({@link defaultSettings}). */
  constructor(
    private readonly db: Db,
    private readonly defaults: TenantSettings,
  ) {
    this.keys = Object.keys(defaults) as (keyof TenantSettings)[];
  }

  /** The tenant's effective settings (defaults filled in). */
  get(tenantId: string): Promise<TenantSettings> {
    return withTenant(this.db, tenantId, (tx) => this.read(tx, tenantId));
  }

  /**
   * The tenant's effective settings inside an open tenant-scoped transaction (for services that
   * honour a setting in the same unit of work, e.g. holding a message or creating a room).
   */
  async read(tx: Tx, tenantId: string): Promise<TenantSettings> {
    return this.effective((await repo.getSettingsRow(tx, tenantId))?.settings);
  }

  /**
   * Merge `patch` into the stored overrides in one transaction (the row is locked, so concurrent
   * patches of different keys both survive): a value sets the key, `null` removes the override.
   * The patch is validated by the route schema (types, ranges, unknown keys); the merged witness
   * policy here. Answers the effective settings.
   * @throws 400 for a malformed witness vkey or more cosignatures required than witnesses listed
   */
  update(tenantId: string, updatedBy: string, patch: TenantSettingsPatch): Promise<TenantSettings> {
    return withTenant(this.db, tenantId, async (tx) => {
      const stored = { ...this.known((await repo.getSettingsRow(tx, tenantId, true))?.settings) };
      for (const k of this.keys) {
        if (!Object.hasOwn(patch, k)) continue;
        const v = patch[k];
        if (v === null || v === undefined) delete stored[k];
        else stored[k] = v;
      }
      const effective = this.effective(stored);
      checkWitnessPolicy(effective);
      await repo.upsertSettings(tx, tenantId, stored, updatedBy);
      await appendAudit(tx, tenantId, { type: 'settings.updated', actor: updatedBy, data: { keys: Object.keys(patch).sort() } });
      return effective;
    });
  }

  /** The stored overrides restricted to the known keys (a key dropped by a later release is ignored). */
  private known(stored: unknown): Record<string, unknown> {
    const s = stored && typeof stored === 'object' ? (stored as Record<string, unknown>) : {};
    return Object.fromEntries(this.keys.filter((k) => Object.hasOwn(s, k) && s[k] !== null).map((k) => [k, s[k]]));
  }

  private effective(stored: unknown): TenantSettings {
    return { ...this.defaults, ...this.known(stored) } as TenantSettings;
  }
}

/**
 * The tenant settings form (contract §4.14; design §8.22: a flat object validated field by field):
 * the settings as form values, and the `PATCH /settings` body of what changed.
 */
import { HELD_TTL_HOURS, type RoomSecurityLevel, type TenantSettings, type TenantSettingsPatch } from '@parley/protocol';
import type { FormResult } from './format';

/** The settings form's values. */
export interface SettingsFormValues {
  heldTtlHours: string;
  defaultRoomSecurityLevel: RoomSecurityLevel;
  scanRulesEnabled: boolean;
  /** Read receipts of the tenant's devices. */
  readReceipts: boolean;
  /** The tenant's devices refuse classical end-to-end sessions (`require_post_quantum`). */
  requirePostQuantum: boolean;
}

/** The form of the current settings. */
export function settingsToForm(s: TenantSettings): SettingsFormValues {
  return {
    heldTtlHours: String(s.held_message_ttl_hours),
    defaultRoomSecurityLevel: s.default_room_security_level,
    scanRulesEnabled: s.scan_rules_enabled,
    readReceipts: s.read_receipts_enabled,
    requirePostQuantum: s.require_post_quantum,
  };
}

/** The keys the form changes against `current` (design §8.22), `body` undefined when nothing changed. */
export function settingsPatch(current: TenantSettings, v: SettingsFormValues): FormResult<TenantSettingsPatch | undefined> {
  const ttl = Number(v.heldTtlHours);
  if (!Number.isInteger(ttl) || ttl < HELD_TTL_HOURS.min || ttl > HELD_TTL_HOURS.max) {
    return { ok: false, error: `Held messages expire after a whole number of hours from ${HELD_TTL_HOURS.min} to ${HELD_TTL_HOURS.max}.` };
  }
  const patch: TenantSettingsPatch = {};
  if (ttl !== current.held_message_ttl_hours) patch.held_message_ttl_hours = ttl;
  if (v.defaultRoomSecurityLevel !== current.default_room_security_level) patch.default_room_security_level = v.defaultRoomSecurityLevel;
  if (v.scanRulesEnabled !== current.scan_rules_enabled) patch.scan_rules_enabled = v.scanRulesEnabled;
  if (v.readReceipts !== current.read_receipts_enabled) patch.read_receipts_enabled = v.readReceipts;
  if (v.requirePostQuantum !== current.require_post_quantum) patch.require_post_quantum = v.requirePostQuantum;
  return { ok: true, body: Object.keys(patch).length > 0 ? patch : undefined };
}

/** The patch that resets every setting to its default (`null` per key). */
export const RESET_SETTINGS: TenantSettingsPatch = { held_message_ttl_hours: null, default_room_security_level: null, scan_rules_enabled: null, read_receipts_enabled: null, require_post_quantum: null };

/**
 * Tenant settings and client-side scan rules (contract §4.14, §6.1 rule 5; design §8.22): schemas and
 * route rows. Settings are a flat object, validated field by field; unknown keys are refused (400).
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { defineRoute } from '../contract.js';
import { lit, Nullable, refuseUnknownKeys, Timestamp } from '../common.js';
import { KEY_DIRECTORY_MAX_WITNESSES } from './key-directory.js';
import { ROOM_SECURITY_LEVELS, type RoomSecurityLevel } from './rooms.js';

/** Bounds of `held_message_ttl_hours` (1 hour .. 30 days). */
export const HELD_TTL_HOURS = { min: 1, max: 720 } as const;

/** A model's price in cents per million tokens, input and output (docs/decisions.md "Spend caps"). */
export const ModelPrice = Type.Object(
  {
    input_cents_per_mtok: Type.Number({ minimum: 0, maximum: 1e9, description: 'cents per 1,000,000 input tokens' }),
    output_cents_per_mtok: Type.Number({ minimum: 0, maximum: 1e9, description: 'cents per 1,000,000 output tokens' }),
  },
  { additionalProperties: false },
);
export type ModelPrice = Static<typeof ModelPrice>;

/** Most models in a price table. */
export const MAX_MODEL_PRICES = 500;

const ModelPricesFields = {
  additionalProperties: ModelPrice,
  maxProperties: MAX_MODEL_PRICES,
  propertyNames: { minLength: 1, maxLength: 200 },
  description: 'price table: model name (`gen_ai.request.model`) -> cents per 1M input/output tokens; key `*` prices every other model (default {})',
};

/**
 * A C2SP tlog-cosignature `cosignature/v1` witness vkey: `<name>+<8 hex key id>+<base64 of 0x04
 * and the 32-byte Ed25519 key>` (the server also checks the key id, design §8.39).
 */
const WitnessVkey = Type.String({ minLength: 55, maxLength: 400, pattern: '^[^\\s+]+\\+[0-9a-f]{8}\\+[A-Za-z0-9+/]{44}$', description: 'C2SP cosignature/v1 witness vkey' });

const WitnessesFields = {
  maxItems: KEY_DIRECTORY_MAX_WITNESSES,
  uniqueItems: true,
  description: `the witnesses (C2SP cosignature/v1 vkeys, at most ${KEY_DIRECTORY_MAX_WITNESSES}) whose cosignatures the tenant's clients require on key directory checkpoints (GET /key-directory; default [])`,
};

const SettingsFields = {
  held_message_ttl_hours: Type.Integer({ minimum: HELD_TTL_HOURS.min, maximum: HELD_TTL_HOURS.max, description: 'hours a held message awaits approval before it expires (default HELD_MESSAGE_TTL_HOURS, 72)' }),
  default_room_security_level: lit(ROOM_SECURITY_LEVELS, { description: 'security level of a room created without one (default standard)' }),
  scan_rules_enabled: Type.Boolean({ description: 'false: GET /scan-rules answers an empty rule set (default true)' }),
  model_prices: Type.Unsafe<Record<string, ModelPrice>>({ type: 'object', ...ModelPricesFields }),
  read_receipts_enabled: Type.Boolean({
    description: "false: no device of the tenant sends read receipts (reads are neither stored nor forwarded; delivered receipts stay); default true. A device may also turn its own off (PATCH /devices/{id}/settings)",
  }),
  require_post_quantum: Type.Boolean({
    description:
      "true: the tenant's devices refuse to start or accept classical end-to-end sessions: X3DH without the peer's signed PQ prekey (PQXDH rev. 3) and MLS groups of a non-hybrid ciphersuite (RFC 9420 §17.1; X-Wing is the hybrid one); default false. Devices read it from GET /devices/self/settings (owner devices: GET /devices/{id}/settings)",
  }),
  key_transparency_witnesses: Type.Array(WitnessVkey, WitnessesFields),
  key_transparency_min_cosignatures: Type.Integer({
    minimum: 0,
    maximum: KEY_DIRECTORY_MAX_WITNESSES,
    description: 'how many of key_transparency_witnesses must cosign a key directory checkpoint before the tenant\'s clients accept it (at most the number of witnesses; default 0)',
  }),
};

/** Tenant settings (`GET/PATCH /settings`): a flat object, every key present on reads (defaults filled in). */
export const TenantSettings = Type.Object(SettingsFields);
export type TenantSettings = Static<typeof TenantSettings>;

/**
 * `T | null` as one `type: [T, 'null']` keyword rather than an `anyOf`: the server's Ajv coerces
 * types, and inside an `anyOf` it would turn `0` or `false` into `null` (a silent reset) and
 * `null` into `false`; with a type list a value matching either type is never coerced.
 */
const orNull = <T>(type: 'integer' | 'string' | 'boolean', s: Partial<TSchema> & { enum?: unknown[] }) =>
  Type.Unsafe<T | null>({ ...s, type: [type, 'null'], ...(s.enum ? { enum: [...s.enum, null] } : {}) });

/** `PATCH /settings` body: any subset of the keys (at least one); `null` resets a key to its default; unknown keys are refused (400). */
export const TenantSettingsPatch = refuseUnknownKeys(
  Type.Object(
    {
      held_message_ttl_hours: Type.Optional(orNull<number>('integer', SettingsFields.held_message_ttl_hours)),
      default_room_security_level: Type.Optional(orNull<RoomSecurityLevel>('string', { enum: [...ROOM_SECURITY_LEVELS] })),
      scan_rules_enabled: Type.Optional(orNull<boolean>('boolean', SettingsFields.scan_rules_enabled)),
      model_prices: Type.Optional(Type.Unsafe<Record<string, ModelPrice> | null>({ type: ['object', 'null'], ...ModelPricesFields })),
      read_receipts_enabled: Type.Optional(orNull<boolean>('boolean', SettingsFields.read_receipts_enabled)),
      require_post_quantum: Type.Optional(orNull<boolean>('boolean', SettingsFields.require_post_quantum)),
      key_transparency_witnesses: Type.Optional(Type.Unsafe<string[] | null>({ type: ['array', 'null'], items: WitnessVkey, ...WitnessesFields })),
      key_transparency_min_cosignatures: Type.Optional(orNull<number>('integer', SettingsFields.key_transparency_min_cosignatures)),
    },
    { additionalProperties: false, minProperties: 1, description: 'keys to set; null resets a key to its default' },
  ),
);
export type TenantSettingsPatch = Static<typeof TenantSettingsPatch>;

/** What a matching scan rule does: `block` stops the send; `warn` reports the match and sends. */
export const SCAN_ACTIONS = ['block', 'warn'] as const;
export const SCAN_SEVERITIES = ['low', 'medium', 'high', 'critical'] as const;
/** Limits of a rule set: rules per set, pattern length (characters). */
export const SCAN_LIMITS = { maxRules: 200, maxPatternLength: 1000 } as const;

/** One client-side scan rule: `pattern` is a JavaScript RegExp source, `flags` a subset of `imsuv` (no `g`/`y`: stateless). */
export const ScanRule = Type.Object(
  {
    id: Type.String({ pattern: '^[a-z0-9][a-z0-9_.-]{0,63}$', description: 'unique within the set; lowercase letters, digits, _ . -' }),
    name: Type.String({ minLength: 1, maxLength: 100 }),
    pattern: Type.String({ minLength: 1, maxLength: SCAN_LIMITS.maxPatternLength, description: 'JavaScript regular expression source' }),
    flags: Type.Optional(Type.String({ pattern: '^[imsuv]{0,5}$', description: 'RegExp flags among i, m, s, u, v' })),
    action: lit(SCAN_ACTIONS, { description: 'block stops the send; warn reports and sends' }),
    severity: lit(SCAN_SEVERITIES),
  },
  { additionalProperties: false },
);
export type ScanRule = Static<typeof ScanRule>;

/** `GET /scan-rules`: the current set (version 0 = built-in, `updated_at` then null); `enabled` false when the tenant turned scanning off (`rules` then empty). */
export const ScanRuleSet = Type.Object({
  version: Type.Integer({ description: '0 = the built-in set' }),
  rules: Type.Array(ScanRule),
  updated_at: Nullable(Timestamp),
  enabled: Type.Boolean({ description: 'false when the scan_rules_enabled setting is off (rules empty)' }),
});
export type ScanRuleSet = Static<typeof ScanRuleSet>;

/** `POST /scan-rules` body: the whole new rule set (rule ids unique, patterns must compile). */
export const UpdateScanRulesRequest = refuseUnknownKeys(Type.Object({ rules: Type.Array(ScanRule, { maxItems: SCAN_LIMITS.maxRules }) }, { additionalProperties: false }));
export type UpdateScanRulesRequest = Static<typeof UpdateScanRulesRequest>;

/** One saved version of the rule set. */
export const ScanRuleVersion = Type.Object({ version: Type.Integer(), rule_count: Type.Integer(), created_by: Type.String(), created_at: Timestamp });
export type ScanRuleVersion = Static<typeof ScanRuleVersion>;

/** `GET /scan-rules/versions`, newest first. */
export const ScanRuleVersionList = Type.Object({ versions: Type.Array(ScanRuleVersion) });
export type ScanRuleVersionList = Static<typeof ScanRuleVersionList>;

export const settingsRoutes = {
  getSettings: defineRoute({
    method: 'GET',
    path: '/api/v1/settings',
    auth: 'owner',
    tags: ['settings'],
    summary: 'Tenant settings, defaults filled in',
    description:
      'The tenant\'s settings as one flat object, defaults filled in for keys the owner never set: held-message lifetime, default room security level, scan rules on or off, model prices for spend, read receipts on or off, whether post-quantum sessions are required, and the key transparency witnesses with the cosignatures required of them.',
    responses: { 200: TenantSettings },
    errors: [401, 403],
  }),
  updateSettings: defineRoute({
    method: 'PATCH',
    path: '/api/v1/settings',
    auth: 'owner',
    tags: ['settings'],
    summary: 'Update tenant settings (merge; null resets a key); answers the full object',
    description:
      'Merges the given keys into the tenant\'s settings (a value sets a key, `null` resets it to its default); concurrent patches of different keys both survive. Audited as `settings.updated` with the changed keys; answers the full object. 400 also for an unknown key or a value out of range (the detail names it), a witness vkey whose key id does not match its name and key, or `key_transparency_min_cosignatures` above the number of `key_transparency_witnesses`.',
    body: TenantSettingsPatch,
    responses: { 200: TenantSettings },
    errors: [400, 401, 403],
  }),
  getScanRules: defineRoute({
    method: 'GET',
    path: '/api/v1/scan-rules',
    auth: 'any',
    tags: ['scan-rules'],
    summary: 'The current client-side scan rule set (built-in version 0 until the owner saves one)',
    description:
      'The tenant\'s current client-side scan rule set (`version`, `rules`, `updated_at`, `enabled`) that SDK clients apply to plaintext before encrypting; the built-in set, version 0, until an owner saves one, and an empty set while `scan_rules_enabled` is false.',
    responses: { 200: ScanRuleSet },
    errors: [401, 403],
  }),
  updateScanRules: defineRoute({
    method: 'POST',
    path: '/api/v1/scan-rules',
    auth: 'owner',
    tags: ['scan-rules'],
    summary: 'Save a new version of the scan rule set (version + 1; older versions are kept)',
    description:
      'Saves `rules` as the tenant\'s next scan rule set version (current + 1); older versions are kept. Clients pick it up on their next fetch. Answers 201 with the new set. 400 also for a duplicate rule id or a pattern that is not a valid regular expression (the detail names the rule).',
    body: UpdateScanRulesRequest,
    responses: { 201: ScanRuleSet },
    errors: [400, 401, 403],
  }),
  listScanRuleVersions: defineRoute({
    method: 'GET',
    path: '/api/v1/scan-rules/versions',
    auth: 'owner',
    tags: ['scan-rules'],
    summary: 'Saved scan rule set versions, newest first',
    description: 'Every saved version of the tenant\'s scan rule set, newest first, with its rule count, author and time.',
    responses: { 200: ScanRuleVersionList },
    errors: [401, 403],
  }),
};

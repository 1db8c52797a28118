/**
 * Tenant settings routes (SPEC §4.14; DESIGN §8.22), owner JWT: `GET /settings` answers the flat
 * object with defaults filled in; `PATCH /settings` validates field by field (types, ranges,
 * unknown keys refused with a 400 naming them) and answers the full object.
 */
import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ownerOf } from '../../http/auth.js';
import { errorResponses } from '../../http/errors.js';
import type { TSchema } from '@sinclair/typebox';
import { refuseUnknownKeys } from '../../http/schemas.js';
import { SecurityLevel } from '../rooms/routes.js';
import type { SecurityLevel as SecurityLevelT } from '../rooms/service.js';
import { HELD_TTL_HOURS, SECURITY_LEVELS, type SettingsService } from './service.js';

const Fields = {
  held_message_ttl_hours: Type.Integer({ minimum: HELD_TTL_HOURS.min, maximum: HELD_TTL_HOURS.max, description: 'hours a held message awaits approval before it expires (default HELD_MESSAGE_TTL_HOURS, 72)' }),
  default_room_security_level: { ...SecurityLevel, description: 'security level of a room created without one (default standard)' },
  scan_rules_enabled: Type.Boolean({ description: 'false: GET /scan-rules answers an empty rule set (default true)' }),
};
const SettingsOut = Type.Object(Fields);
/**
 * `T | null` as one `type: [T, 'null']` keyword rather than an `anyOf`: the app's Ajv coerces
 * types, and inside an `anyOf` it would turn `0` or `false` into `null` (a silent reset) and
 * `null` into `false`; with a type list a value matching either type is never coerced.
 */
const orNull = <T>(type: 'integer' | 'string' | 'boolean', s: Partial<TSchema> & { enum?: unknown[] }) =>
  Type.Unsafe<T | null>({ ...s, type: [type, 'null'], ...(s.enum ? { enum: [...s.enum, null] } : {}) });
const SettingsPatch = refuseUnknownKeys(
  Type.Object(
    {
      held_message_ttl_hours: Type.Optional(orNull<number>('integer', Fields.held_message_ttl_hours)),
      default_room_security_level: Type.Optional(orNull<SecurityLevelT>('string', { enum: [...SECURITY_LEVELS] })),
      scan_rules_enabled: Type.Optional(orNull<boolean>('boolean', Fields.scan_rules_enabled)),
    },
    { additionalProperties: false, minProperties: 1, description: 'keys to set; null resets a key to its default' },
  ),
);

const tags = ['settings'];
const security = [{ ownerJwt: [] }];
const owner = { auth: 'owner' as const };

export const settingsRoutes: FastifyPluginAsyncTypebox<{ settings: SettingsService }> = async (app, { settings }) => {
  app.get(
    '/settings',
    { config: owner, schema: { tags, security, summary: 'Tenant settings, defaults filled in', response: { 200: SettingsOut, ...errorResponses(401, 403) } } },
    async (req) => settings.get(ownerOf(req).tenantId),
  );

  app.patch(
    '/settings',
    {
      config: owner,
      schema: {
        tags,
        security,
        summary: 'Update tenant settings (merge; null resets a key); answers the full object',
        body: SettingsPatch,
        response: { 200: SettingsOut, ...errorResponses(400, 401, 403) },
      },
    },
    async (req) => {
      const o = ownerOf(req);
      return settings.update(o.tenantId, o.sub, req.body);
    },
  );
};

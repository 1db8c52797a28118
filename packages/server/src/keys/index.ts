/**
 * The platform's keys, below `auth/` and every module: the secrets-key sealing of private halves
 * (sealed-keys.ts), the shared platform Ed25519 keys (platform-keys.ts, multibase.ts), the Skill
 * Permission Token signing keys (spt-keys.ts) and the audit log's checkpoint signing keys
 * (audit-log-keys.ts). Everything else imports them from here.
 */
export * from './audit-log-keys.js';
export * from './multibase.js';
export * from './platform-keys.js';
export * from './sealed-keys.js';
export * from './spt-keys.js';

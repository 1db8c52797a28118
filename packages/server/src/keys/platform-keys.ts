/**
 * The platform's own Ed25519 keys in the `platform_keys` platform table (no `tenant_id`; the
 * application role cannot read it): one row per purpose (`vc-issuer`, `spt-signing`,
 * `audit-log`, and their `…:previous:…` rows kept for verification after a rotation), the private
 * half sealed with the secrets key (sealed-keys.ts). The first instance that starts creates a
 * purpose's key; every other loads it, so all instances sign with the same key.
 */
import { eq } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { platformKeys } from '../db/schema/index.js';
import { crossTenant } from '../db/tenant.js';
import type { SecretBox } from '../lib/secret-box.js';
import { generateEd25519, type Ed25519Multibase } from './multibase.js';
import { openPlatformKeyRow, sealPlatformKey } from './sealed-keys.js';

/**
 * How long an instance uses its cached signing keys (device-token keys and SPT keys) before it
 * reloads them from the database, in milliseconds: the longest an instance keeps signing with a
 * key after a rotation, and keeps accepting a retired key's tokens after a forced retirement.
 */
export const KEY_REFRESH_MS = 60_000;

/** A key kept for verification: its `kid`, when it stopped signing, and when it may be retired. */
export interface RetiringKey {
  kid: string;
  /** When instances stopped signing with it (the rotation; ISO 8601). */
  deactivated_at: string;
  /** When every token it signed has expired: `deactivated_at` + token lifetime + {@link KEY_REFRESH_MS} (ISO 8601). */
  retirable_at: string;
}

/** Why the platform key reads and writes run outside tenant scope. */
export const PLATFORM_KEYS_REASON = 'platform keys: a platform table without tenant_id';

async function readPlatformKey(db: Db, purpose: string) {
  const [row] = await crossTenant(db, PLATFORM_KEYS_REASON, (tx) => tx.select().from(platformKeys).where(eq(platformKeys.purpose, purpose)));
  return row;
}

/**
 * The row of the platform Ed25519 key of `purpose` (`vc-issuer`, `spt-signing`, `audit-log`, …) in
 * `platform_keys` with its private half opened ({@link openPlatformKeyRow}), created (named
 * `keyName`, where its format names keys; the private half sealed under `box`) when the database
 * has none. Concurrent first starts are safe: the insert does nothing on conflict and every
 * instance then reads the one stored key, so all instances share it. `generate` makes the key pair
 * (default Ed25519 as multibase; the Web Push VAPID key is a P-256 pair, modules/push/vapid.ts).
 * @throws when the key can be neither read nor created, or it is sealed under no key of `box`.
 */
export async function loadPlatformKeyRow(
  db: Db,
  box: SecretBox,
  purpose: string,
  keyName?: string,
  generate: () => Promise<Ed25519Multibase> = generateEd25519,
): Promise<typeof platformKeys.$inferSelect> {
  let row = await readPlatformKey(db, purpose);
  if (!row) {
    const fresh = sealPlatformKey(box, await generate());
    await crossTenant(db, PLATFORM_KEYS_REASON, (tx) => tx.insert(platformKeys).values({ purpose, ...fresh, keyName }).onConflictDoNothing());
    row = await readPlatformKey(db, purpose);
  }
  if (!row) throw new Error(`platform key "${purpose}" could not be created`);
  return openPlatformKeyRow(box, row);
}

/** The platform Ed25519 key of `purpose` as multibase, private half opened ({@link loadPlatformKeyRow}). */
export async function loadPlatformKey(db: Db, box: SecretBox, purpose: string): Promise<Ed25519Multibase> {
  const row = await loadPlatformKeyRow(db, box, purpose);
  return { publicKeyMultibase: row.publicKeyMultibase, privateKeyMultibase: row.privateKeyMultibase };
}

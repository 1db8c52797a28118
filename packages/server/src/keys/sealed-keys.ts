/**
 * The platform's private keys at rest (design §5 device-token keys in `signing_keys.private_jwk`;
 * design §8.7, §8.16, §8.33 and the renewal-challenge key in `platform_keys.private_key_multibase`)
 * are sealed with the secrets key ({@link SecretBox}, `SECRETS_KEY`, as webhook secrets are), so a
 * database dump alone cannot mint device JWTs, SPTs, credentials or audit checkpoints. Each value is
 * bound to its key's public identity: a device-token key to its `kid`, a platform key to its
 * `public_key_multibase` (a rotation copies a platform key to another purpose row unchanged, so the
 * binding does not use the purpose).
 *
 * Rows written before sealing hold the clear value: they are still read, sealed at the next start
 * ({@link resealPlatformKeys} with `clearOnly`), and re-sealed under a new `SECRETS_KEY` by
 * `npm run cli -- reseal-secrets` (docs/operations.md "Key rotation").
 */
import { and, eq } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { platformKeys, signingKeys } from '../db/schema/index.js';
import { crossTenant } from '../db/tenant.js';
import { SecretBox } from '../lib/secret-box.js';
import { resealRows, type ResealReport } from '../lib/reseal.js';

const REASON = 'platform keys: seal the private halves at rest (platform tables without tenant_id)';

/** The sealing context of a device-token signing key's private JWK. */
export const signingKeyContext = (kid: string): string => `signing_keys.private_jwk:${kid}`;

/** The sealing context of a platform key's `private_key_multibase`. */
export const platformKeyContext = (publicKeyMultibase: string): string => `platform_keys.private_key_multibase:${publicKeyMultibase}`;

/**
 * The clear private key from its stored form: a sealed value is opened under `context`; a legacy
 * clear value is answered as it is.
 * @throws SecretBoxError when a sealed value opens under no key of the ring (another
 *   `SECRETS_KEY`, or a value moved to another key's row).
 */
export function openStoredKey(box: SecretBox, stored: string, context: string): string {
  return SecretBox.isSealed(stored) ? box.open(stored, context) : stored;
}

/** A platform key row with its private half opened ({@link openStoredKey}). */
export function openPlatformKeyRow<R extends { publicKeyMultibase: string; privateKeyMultibase: string }>(box: SecretBox, row: R): R {
  return { ...row, privateKeyMultibase: openStoredKey(box, row.privateKeyMultibase, platformKeyContext(row.publicKeyMultibase)) };
}

/** The stored form of a platform key pair: its private half sealed ({@link platformKeyContext}). */
export function sealPlatformKey<K extends { publicKeyMultibase: string; privateKeyMultibase: string }>(box: SecretBox, key: K): K {
  return { ...key, privateKeyMultibase: box.seal(key.privateKeyMultibase, platformKeyContext(key.publicKeyMultibase)) };
}

/**
 * Seal every private key of `signing_keys` and `platform_keys` under the current key of `box`:
 * clear (legacy) values, and, unless `clearOnly`, values that open only under a previous key
 * (`SECRETS_KEY_PREVIOUS`). Each row is updated only if it still holds what was read, so it is safe
 * while instances serve. Run with `clearOnly` at every start (app.ts) and in full by
 * `npm run cli -- reseal-secrets`.
 * @returns the counts of both tables together; `failed` counts values no key of the ring opens (left as they are).
 */
export async function resealPlatformKeys(db: Db, box: SecretBox, opts: { clearOnly?: boolean } = {}): Promise<ResealReport> {
  const next = (stored: string, context: string): string | null => {
    if (!SecretBox.isSealed(stored)) return box.seal(stored, context);
    return opts.clearOnly ? null : box.reseal(stored, context);
  };
  const { signing, platform } = await crossTenant(db, REASON, async (tx) => ({
    signing: await tx.select({ kid: signingKeys.kid, stored: signingKeys.privateJwk }).from(signingKeys),
    platform: await tx.select({ purpose: platformKeys.purpose, pub: platformKeys.publicKeyMultibase, stored: platformKeys.privateKeyMultibase }).from(platformKeys),
  }));
  const a = await resealRows(
    signing,
    (r) => next(r.stored, signingKeyContext(r.kid)),
    (r, sealed) => crossTenant(db, REASON, (tx) => tx.update(signingKeys).set({ privateJwk: sealed }).where(and(eq(signingKeys.kid, r.kid), eq(signingKeys.privateJwk, r.stored)))),
  );
  const b = await resealRows(
    platform,
    (r) => next(r.stored, platformKeyContext(r.pub)),
    (r, sealed) =>
      crossTenant(db, REASON, (tx) => tx.update(platformKeys).set({ privateKeyMultibase: sealed }).where(and(eq(platformKeys.purpose, r.purpose), eq(platformKeys.privateKeyMultibase, r.stored)))),
  );
  return { checked: a.checked + b.checked, resealed: a.resealed + b.resealed, current: a.current + b.current, failed: a.failed + b.failed };
}

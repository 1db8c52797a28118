/**
 * Webhook signing secrets at rest (docs/decisions.md "Webhook delivery"): `devices.webhook_secret`
 * holds the Standard Webhooks secret (`whsec_…`) sealed with AES-256-GCM ({@link SecretBox}),
 * bound to the device id (a sealed value copied to another device does not open). Legacy rows
 * written before sealing hold the clear `whsec_…` value: they are still read, and replaced by a
 * sealed value on the next registration (every registration issues a new secret).
 */
import { randomBytes } from 'node:crypto';
import { and, eq, isNotNull } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { devices } from '../../db/schema/index.js';
import { crossTenant } from '../../db/tenant.js';
import { resealRows, type ResealReport } from '../../lib/reseal.js';
import { SecretBox, SecretBoxError } from '../../lib/secret-box.js';

const context = (deviceId: string) => `devices.webhook_secret:${deviceId}`;

/** A fresh Standard Webhooks secret: `whsec_` + base64 of 24 random bytes. */
export const newWebhookSecret = (): string => `whsec_${randomBytes(24).toString('base64')}`;

/** The stored form of `secret` for device `deviceId`. */
export const sealWebhookSecret = (box: SecretBox, deviceId: string, secret: string): string => box.seal(secret, context(deviceId));

/**
 * The clear secret from its stored form: a sealed value is opened, a legacy clear `whsec_…`
 * value is answered as it is.
 * @throws SecretBoxError when a sealed value does not open (altered, other key, other device) or
 *   the value is in neither form.
 */
export function openWebhookSecret(box: SecretBox, deviceId: string, stored: string): string {
  if (SecretBox.isSealed(stored)) return box.open(stored, context(deviceId));
  if (stored.startsWith('whsec_')) return stored;
  throw new SecretBoxError('webhook secret is neither sealed nor a legacy whsec_ value');
}

/**
 * Re-seal every device's webhook secret under the current key of `box` (the secrets-key rotation,
 * docs/operations.md "Key rotation"): a value that opens only under a previous key
 * (`SECRETS_KEY_PREVIOUS`) or is a legacy clear value is sealed again under `SECRETS_KEY`. Each row
 * is updated only if it still holds the value read (a registration in between wins), so it is
 * safe while instances serve. Across tenants (a platform maintenance task). Run by
 * `npm run cli -- reseal-secrets`.
 */
export async function resealWebhookSecrets(db: Db, box: SecretBox): Promise<ResealReport> {
  const reason = 'secrets-key rotation: re-seal every tenant\'s webhook secrets';
  const rows = await crossTenant(db, reason, (tx) => tx.select({ id: devices.id, secret: devices.webhookSecret }).from(devices).where(isNotNull(devices.webhookSecret)));
  return resealRows(
    rows,
    (row) => (SecretBox.isSealed(row.secret!) ? box.reseal(row.secret!, context(row.id)) : sealWebhookSecret(box, row.id, openWebhookSecret(box, row.id, row.secret!))),
    (row, next) => crossTenant(db, reason, (tx) => tx.update(devices).set({ webhookSecret: next }).where(and(eq(devices.id, row.id), eq(devices.webhookSecret, row.secret!)))),
  );
}

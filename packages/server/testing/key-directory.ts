/**
 * The malicious server of the key-transparency tests (design §8.39): what a compromised or
 * compelled operator could do to the keys it serves, done to a running test app's database, so
 * client suites (SDK, web app) can check that each move is refused or reported.
 */
import { sql } from 'drizzle-orm';
import type { TestApp } from './harness.js';

/**
 * Mark the app's key directory backfill (jobs/key-directory-backfill.ts) as run, so it does not
 * commit what a test swapped afterwards: a test of what clients refuse needs the directory to
 * keep the keys the devices published.
 */
async function backfillDone(t: TestApp): Promise<void> {
  await t.app.parley.database.db.execute(sql`
    insert into scheduled_jobs (name, next_run_at) values ('key_directory_backfill', now() + interval '365 days')
    on conflict (name) do update set next_run_at = excluded.next_run_at`);
}

/** Serve other keys for a device than it registered (its `devices` row rewritten; the directory untouched). */
export async function swapDeviceKeys(t: TestApp, deviceId: string, keys: { identity_public_key?: string; ephemeral_public_key?: string }): Promise<void> {
  const db = t.app.parley.database.db;
  await backfillDone(t);
  if (keys.identity_public_key) await db.execute(sql`update devices set identity_public_key = ${keys.identity_public_key} where id = ${deviceId}`);
  if (keys.ephemeral_public_key) await db.execute(sql`update devices set ephemeral_public_key = ${keys.ephemeral_public_key} where id = ${deviceId}`);
}

/**
 * Serve other X25519 one-time prekeys for a device: each unclaimed one is replaced by what `make`
 * answers (a public key of 32 bytes and its id, so a client that names keys by a hash of them
 * gets consistent pairs).
 */
export async function swapOneTimePrekeys(t: TestApp, deviceId: string, make: () => { publicKey: Uint8Array; keyId: string }): Promise<void> {
  const db = t.app.parley.database.db;
  await backfillDone(t);
  const rows = (await db.execute(sql`select id from pq_prekeys where device_id = ${deviceId} and kind = 'x25519' and not last_resort and claimed_at is null`)) as unknown as { rows: { id: string }[] };
  for (const { id } of rows.rows) {
    const k = make();
    await db.execute(sql`update pq_prekeys set public_key = ${Buffer.from(k.publicKey)}, key_id = ${k.keyId} where id = ${id}`);
  }
}

/** Serve another owner key (base64 Ed25519) in a hub identity's DID document. */
export async function swapHubOwnerKey(t: TestApp, hubAddress: string, publicKeyBase64: string): Promise<void> {
  await backfillDone(t);
  await t.app.parley.database.db.execute(sql`update hub_identities set public_key = ${publicKeyBase64} where hub_address = ${hubAddress}`);
}

/** Commit a value the label's owner never published: the operator adds a key in a device's name, directory and all. */
export async function forgeKeyDirectoryEntry(t: TestApp, label: string, value: Uint8Array): Promise<void> {
  await t.app.parley.database.db.transaction((tx) => t.app.parley.keyDirectory.publish(tx, [{ label, value }]));
}

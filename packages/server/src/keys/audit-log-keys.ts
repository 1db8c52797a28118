/**
 * The platform audit-log key (design §8.33): one Ed25519 key, named `<host>/audit-log` (`host` =
 * `new URL(PUBLIC_URL).host` when the key was first created; the name, hence every tenant log's
 * origin `<host>/audit/<tenant_id>`, stays fixed after that), signs every tenant's checkpoints as
 * C2SP signed notes, and the key directory's (origin `<host>/keys`, design §8.39). It lives in `platform_keys` (purpose `audit-log`, with its `key_name`; the
 * private half sealed with the secrets key, keys/sealed-keys.ts), created by the first instance
 * that starts and shared by every other.
 *
 * Rotation ({@link rotateAuditLogKey}, `npm run cli -- rotate-audit-log-key`): the active key moves
 * to `audit-log:previous:<key id>` and goes on signing beside the new one, so verifiers that hold
 * the old vkey keep verifying new checkpoints until {@link retireAuditLogKeys} removes it (once they
 * have the new vkey). Instances reload the keys at most {@link KEY_REFRESH_MS} after the last load.
 */
import { createHash, createPrivateKey, sign, type KeyObject } from 'node:crypto';
import type { AuditLogKey, AuditLogKeyInfo } from '@parley/protocol';
import { desc, eq, like } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { platformKeys } from '../db/schema/index.js';
import { crossTenant } from '../db/tenant.js';
import { KeyReloader } from '../lib/key-reloader.js';
import type { SecretBox } from '../lib/secret-box.js';
import { decodePrivateKeyMultibase, decodePublicKeyMultibase, generateEd25519 } from './multibase.js';
import { KEY_REFRESH_MS, loadPlatformKeyRow, PLATFORM_KEYS_REASON as REASON } from './platform-keys.js';
import { openPlatformKeyRow, sealPlatformKey } from './sealed-keys.js';

/** `platform_keys.purpose` of the active audit-log key. */
export const AUDIT_LOG_KEY_PURPOSE = 'audit-log';
/** `platform_keys.purpose` prefix of keys that still sign beside the active one after a rotation (`…<key id hex>`). */
export const AUDIT_LOG_PREVIOUS_PREFIX = `${AUDIT_LOG_KEY_PURPOSE}:previous:`;

/** The key name of the service at `publicUrl`: `<host>/audit-log` (port kept, path dropped). */
export const auditLogKeyName = (publicUrl: string): string => `${new URL(publicUrl).host}/audit-log`;

/** The C2SP signed-note key id of an Ed25519 key: first 4 bytes of SHA-256(name || 0x0A || 0x01 || key), big-endian. */
export const noteKeyId = (name: string, publicKey: Uint8Array): number =>
  createHash('sha256').update(name, 'utf8').update(Uint8Array.of(0x0a, 0x01)).update(publicKey).digest().readUInt32BE(0);

/** A key id as its 8 hex digits. */
export const keyIdHex = (id: number): string => id.toString(16).padStart(8, '0');

/** The C2SP verifier key: `<name>+<key id hex>+<base64(0x01 || public key)>`. */
export const vkeyOf = (name: string, publicKey: Uint8Array): string => `${name}+${keyIdHex(noteKeyId(name, publicKey))}+${Buffer.concat([Uint8Array.of(0x01), publicKey]).toString('base64')}`;

/** A key that signs notes: its name, signed-note key id and Ed25519 private key. */
export interface NoteSigner {
  name: string;
  keyId: number;
  privateKey: KeyObject;
}

/** What signs a tenant's checkpoints: the keys as loaded when it was taken. */
export interface LogSigner {
  /** The active key's id (8 hex), under which the checkpoints it signs are kept. */
  keyId: string;
  /** The host of the key's name (`<host>/audit-log`), which names the logs it signs. */
  host: string;
  /** A tenant's log origin: `<host>/audit/<tenant_id>`. */
  origin(tenantId: string): string;
  /** The signed note of `text` (ending with a newline) by every current key ({@link signNote}). */
  sign(text: string): string;
}

/** One loaded key. */
interface Signer extends NoteSigner {
  publicKey: Buffer;
}

/**
 * A C2SP signed note of `text` (which ends with a newline) by each of `signers`: the text, a blank
 * line, then `— <name> <base64(4-byte key id || Ed25519 signature over the text)>` per signer.
 */
export function signNote(text: string, signers: readonly NoteSigner[]): string {
  const message = Buffer.from(text, 'utf8');
  const lines = signers.map((k) => {
    const id = Buffer.alloc(4);
    id.writeUInt32BE(k.keyId);
    return `\u2014 ${k.name} ${Buffer.concat([id, sign(null, message, k.privateKey)]).toString('base64')}\n`;
  });
  return `${text}\n${lines.join('')}`;
}

/** A stored key's name and raw public key. @throws when it has no name or its public key is not Ed25519. */
function publicOf(row: typeof platformKeys.$inferSelect): { name: string; publicKey: Buffer } {
  if (!row.keyName) throw new Error(`platform key ${row.purpose} has no key_name`);
  const publicKey = Buffer.from(decodePublicKeyMultibase(row.publicKeyMultibase) ?? []);
  if (publicKey.length !== 32) throw new Error(`platform key ${row.purpose}: not an Ed25519 public key`);
  return { name: row.keyName, publicKey };
}

/** The signer of a stored key, its private half opened under `box`. */
function signerOf(box: SecretBox, row: typeof platformKeys.$inferSelect): Signer {
  const { name, publicKey } = publicOf(row);
  const seed = decodePrivateKeyMultibase(openPlatformKeyRow(box, row).privateKeyMultibase);
  const privateKey = createPrivateKey({ key: { kty: 'OKP', crv: 'Ed25519', x: publicKey.toString('base64url'), d: Buffer.from(seed).toString('base64url') }, format: 'jwk' });
  return { name, keyId: noteKeyId(name, publicKey), publicKey, privateKey };
}

const infoOf = (s: Signer): AuditLogKeyInfo => ({ key_name: s.name, public_key: s.publicKey.toString('hex'), vkey: vkeyOf(s.name, s.publicKey) });

export class AuditLogKeys {
  /** The active key first, then the previous ones (newest rotation first). */
  private keys: Signer[] = [];
  private readonly reloader: KeyReloader;

  /**
   * @param box the secrets keyring that seals the keys at rest (`SECRETS_KEY`).
   * @param publicUrl `PUBLIC_URL`, naming the key when this instance creates it.
   * @param refreshMs how long loaded keys are used before a reload ({@link KEY_REFRESH_MS}; tests shorten it).
   */
  constructor(
    private readonly db: Db,
    private readonly box: SecretBox,
    private readonly publicUrl: string,
    refreshMs = KEY_REFRESH_MS,
  ) {
    this.reloader = new KeyReloader(() => this.loadKeys(), refreshMs);
  }

  /** Load (or create, once for all instances) the active key and load the previous ones. @throws on a malformed key or a database error. */
  async init(): Promise<void> {
    await this.reloader.load();
  }

  private async loadKeys(): Promise<void> {
    const active = await loadPlatformKeyRow(this.db, this.box, AUDIT_LOG_KEY_PURPOSE, auditLogKeyName(this.publicUrl));
    const previous = await crossTenant(this.db, REASON, (tx) =>
      tx.select().from(platformKeys).where(like(platformKeys.purpose, `${AUDIT_LOG_PREVIOUS_PREFIX}%`)).orderBy(desc(platformKeys.createdAt)),
    );
    this.keys = [active, ...previous].map((row) => signerOf(this.box, row));
  }

  private async current(): Promise<Signer[]> {
    if (this.keys.length === 0) throw new Error('AuditLogKeys.init() has not run');
    await this.reloader.fresh();
    return this.keys;
  }

  /**
   * The keys as loaded now (reloaded first when stale), to sign with inside a transaction: a reload
   * opens its own transaction, which must not wait for the caller's (PGlite has one connection).
   */
  async signer(): Promise<LogSigner> {
    const keys = await this.current();
    const active = keys[0]!;
    const host = active.name.slice(0, -'/audit-log'.length);
    return {
      keyId: keyIdHex(active.keyId),
      host,
      origin: (tenantId) => `${host}/audit/${tenantId}`,
      sign: (text) => signNote(text, keys),
    };
  }

  /** `GET /audit/log-key`: the active key and the previous ones still signing. */
  async info(): Promise<AuditLogKey> {
    const [active, ...previous] = await this.current();
    return { ...infoOf(active!), previous: previous.map(infoOf) };
  }
}

/**
 * Rotate the audit-log key: in one transaction the active key is copied to
 * `audit-log:previous:<key id>` (it keeps co-signing, copied as stored) and replaced by a fresh key
 * of the same name, sealed under `box`.
 * @returns the new vkey and the previous one.
 * @throws when there is no key yet (no instance has started).
 */
export async function rotateAuditLogKey(db: Db, box: SecretBox): Promise<{ vkey: string; previous: string }> {
  const fresh = sealPlatformKey(box, await generateEd25519());
  return crossTenant(db, REASON, async (tx) => {
    const [old] = await tx.select().from(platformKeys).where(eq(platformKeys.purpose, AUDIT_LOG_KEY_PURPOSE)).for('update');
    if (!old) throw new Error('no audit-log key yet: start the service once before rotating');
    const was = signerOf(box, old);
    await tx.insert(platformKeys).values({ ...old, purpose: `${AUDIT_LOG_PREVIOUS_PREFIX}${keyIdHex(was.keyId)}`, createdAt: new Date() });
    await tx.update(platformKeys).set({ ...fresh, createdAt: new Date() }).where(eq(platformKeys.purpose, AUDIT_LOG_KEY_PURPOSE));
    return { vkey: vkeyOf(was.name, Buffer.from(decodePublicKeyMultibase(fresh.publicKeyMultibase)!)), previous: vkeyOf(was.name, was.publicKey) };
  });
}

/** Stop the previous audit-log keys from signing (delete them). @returns their vkeys. */
export async function retireAuditLogKeys(db: Db): Promise<{ retired: string[] }> {
  const gone = await crossTenant(db, REASON, (tx) => tx.delete(platformKeys).where(like(platformKeys.purpose, `${AUDIT_LOG_PREVIOUS_PREFIX}%`)).returning());
  return { retired: gone.map(publicOf).map((s) => vkeyOf(s.name, s.publicKey)) };
}

/**
 * Key bindings (docs/decisions.md "Key bindings"): a fresh proof that the caller holds the
 * identity key it registers or activates, for the steps that no single-use secret protects
 * (`client_key_register`, `POST /devices/register`, `POST /devices/{id}/activate`). The fixed
 * proof of possession (a signature over the raw identity key) is the same every time,
 * so whoever saw it once could present it again with a key of their own beside it.
 *
 * - `POST /api/v1/key-binding/nonce` issues a stateless nonce (auth/stateless-challenges.ts)
 *   naming the purpose, the tenant and the subject (the API key for `client_key_register`, the
 *   device for `device_activate`), valid {@link KEY_BINDING_NONCE_TTL_MS}.
 * - The request carries `key_binding {nonce, signature}`: Ed25519 by the identity key over
 *   @parley/protocol `keyBindingMessage` (domain `parley/v2/key-binding`, canonical JSON of
 *   purpose, nonce, tenant, keys and device id). Verified, then the nonce is spent in the step's
 *   own transaction (single use).
 * - Without `key_binding` (the legacy bodies of the wire contract) a step is still accepted, except when
 *   `KEY_BINDING_REQUIRED` is set, and except a registration of an identity key that another live
 *   device holds (any tenant): that is what a replay looks like.
 */
import type { KeyBinding, KeyBindingNonce, KeyBindingNonceRequest, KeyBindingPurposeName } from '@parley/protocol';
import { keyBindingMessage } from '@parley/protocol';
import type { Principal } from '../../auth/authenticator.js';
import { StatelessChallenges } from '../../auth/stateless-challenges.js';
import type { Db, Tx } from '../../db/client.js';
import { crossTenant, crossTenantRead } from '../../db/tenant.js';
import { verifyEd25519 } from '../../lib/crypto.js';
import { badRequest, notFound, unauthorized } from '../../lib/errors.js';
import type { SecretBox } from '../../lib/secret-box.js';
import * as repo from './repo.js';

/** How long a key-binding nonce stays valid. */
export const KEY_BINDING_NONCE_TTL_MS = 5 * 60_000;
const NONCE_PREFIX = 'parley-bind';

/** Settings of {@link KeyBindingService}. */
export interface KeyBindingOptions {
  /** Refuse every registration and activation without `key_binding` (`KEY_BINDING_REQUIRED`, default false). */
  required: boolean;
  /** Nonce lifetime (default {@link KEY_BINDING_NONCE_TTL_MS}). */
  ttlMs?: number;
}

/** What a binding must name: the step, its tenant and subject, and the keys it binds. */
export interface KeyBindingExpectation {
  purpose: KeyBindingPurposeName;
  tenantId: string;
  /** The API key id (`client_key_register`), the device id (`device_activate`), '' otherwise. */
  subject: string;
  identityPublicKey: string;
  ephemeralPublicKey: string;
  /** The device activated (`device_activate` only). */
  deviceId?: string;
}

const UPGRADE = 'send a fresh key_binding ({nonce, signature}; nonce from POST /api/v1/key-binding/nonce): upgrade the Parley SDK';

export class KeyBindingService {
  private readonly nonces: StatelessChallenges;

  constructor(
    private readonly db: Db,
    box: SecretBox,
    private readonly options: KeyBindingOptions,
  ) {
    this.nonces = new StatelessChallenges(db, box, { prefix: NONCE_PREFIX, info: 'parley key-binding nonce v1', ttlMs: options.ttlMs ?? KEY_BINDING_NONCE_TTL_MS });
  }

  /** Derive the nonce MAC key (see {@link StatelessChallenges.init}). */
  init(): Promise<void> {
    return this.nonces.init();
  }

  /**
   * `POST /api/v1/key-binding/nonce`: a nonce for `purpose` in the caller's tenant.
   * `client_key_register` needs an API key (401 otherwise), `owner_device_register` an owner JWT
   * with a tenant (401), `device_activate` a `device_id` (400 without, 404 unknown: the device id
   * is the activation's credential). Reads nothing else and writes nothing.
   */
  async issueNonce(principal: Principal | undefined, body: KeyBindingNonceRequest): Promise<KeyBindingNonce> {
    let tenantId: string;
    let subject = '';
    let deviceId: string | null = null;
    if (body.purpose === 'client_key_register') {
      if (principal?.kind !== 'apikey') throw unauthorized('a client_key_register nonce needs the API key (X-API-Key)');
      tenantId = principal.tenantId;
      subject = principal.apiKeyId;
    } else if (body.purpose === 'owner_device_register') {
      if (principal?.kind !== 'owner' || !principal.tenantId) throw unauthorized('an owner_device_register nonce needs the owner JWT of a tenant member');
      tenantId = principal.tenantId;
    } else {
      if (!body.device_id) throw badRequest('a device_activate nonce needs device_id');
      deviceId = body.device_id;
      const found = await crossTenant(this.db, 'key-binding nonce for activation: the device id is the credential', (tx) => repo.deviceTenantOf(tx, body.device_id!));
      if (!found) throw notFound('device');
      tenantId = found;
      subject = deviceId;
    }
    const { value, expiresAt } = this.nonces.issue([body.purpose, tenantId, subject]);
    return { nonce: value, purpose: body.purpose, tenant_id: tenantId, device_id: deviceId, expires_at: expiresAt.toISOString() };
  }

  /**
   * Check `binding` against `expect` and spend its nonce, in the step's tenant transaction `tx`
   * (so a step that fails later leaves the nonce unspent). @throws 400 when the nonce is not ours,
   * is of another purpose, tenant or subject, has expired or was spent, or the signature does not
   * verify over {@link keyBindingMessage} (strict Ed25519, lib/crypto.ts).
   */
  async verifyAndSpend(tx: Tx, binding: KeyBinding, expect: KeyBindingExpectation, now = new Date()): Promise<void> {
    const issued = this.nonces.verify(binding.nonce, now);
    const [purpose, tenantId, subject] = issued?.fields ?? [];
    if (!issued || issued.fields.length !== 3 || purpose !== expect.purpose || tenantId !== expect.tenantId || subject !== expect.subject) {
      throw badRequest(`key_binding.nonce is not a valid ${expect.purpose} nonce for this tenant (unknown, expired or issued for another step): ask POST /api/v1/key-binding/nonce again`);
    }
    const message = keyBindingMessage({
      purpose: expect.purpose,
      nonce: binding.nonce,
      tenant_id: expect.tenantId,
      identity_public_key: expect.identityPublicKey,
      ephemeral_public_key: expect.ephemeralPublicKey,
      ...(expect.deviceId !== undefined ? { device_id: expect.deviceId } : {}),
    });
    if (!verifyEd25519(expect.identityPublicKey.toLowerCase(), message, binding.signature.toLowerCase())) {
      throw badRequest('key_binding.signature does not verify against the identity key over this nonce, tenant and these keys');
    }
    if (!(await repo.spendNonce(tx, { nonce: binding.nonce, tenantId: expect.tenantId, purpose: expect.purpose, expiresAt: issued.expiresAt }, now))) {
      throw badRequest('key_binding.nonce was already used: ask POST /api/v1/key-binding/nonce again');
    }
  }

  /**
   * A step without `key_binding` (the wire contract's legacy bodies): refused (400, naming the upgrade)
   * under `KEY_BINDING_REQUIRED`, and for a registration (`client_key_register`,
   * `owner_device_register`) whose identity key a live device of another tenant, or a
   * non-revoked device of this one, already holds: a replayed proof of possession.
   */
  async requireLegacyAllowed(purpose: KeyBindingPurposeName, tenantId: string, identityHex: string): Promise<void> {
    if (this.options.required) throw badRequest(`this server requires a key binding for ${purpose}: ${UPGRADE}`);
    if (purpose === 'device_activate') return;
    const held = await crossTenantRead(this.db, 'registration without a key binding: is the identity key held by another device', (q) => repo.identityKeyHeldElsewhere(q, identityHex, tenantId));
    if (held) throw badRequest(`identity_public_key is already registered to another device; a registration without a key binding cannot prove a fresh hold of it: ${UPGRADE}`);
  }
}

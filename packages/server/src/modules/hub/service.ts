/**
 * The hub-address registry (contract §2.8 address part, §4.10; design §8.13, §8.15, §8.18). A hub
 * identity gives an agent a platform-wide unique, immutable `hub_address` (DID
 * `did:hub:<address>`), optionally bound to one ACTIVE agent device of the tenant. This is the
 * registry A2A channels resolve addresses with; DID documents (did-service.ts), capability
 * records (capabilities.ts), profiles and search (directory.ts) and certification (certify.ts)
 * build on the same rows. Every write that changes an identity's names, description or
 * capabilities recomputes its `search_document` in the same transaction
 * ({@link repo.refreshSearchDocument}).
 */
import { randomUUID } from 'node:crypto';
import { type HubIdentity, type RegisterHubRequest, type TierSource, type TrustTier } from '@parley/protocol';
import type { Db, Tx } from '../../db/client.js';
import { crossTenant, withTenant } from '../../db/tenant.js';
import { badRequest, conflict, notFound } from '../../lib/errors.js';
import { hubDid, normalizeHubAddress } from '../../lib/hub-address.js';
import { appendAudit } from '../audit/index.js';
import { getDevice } from '../devices/index.js';
import { decodeOwnerKey } from './ed25519.js';
import * as repo from './repo.js';
import { commitDidKeys } from './did-keys.js';
import type { KeyDirectory } from '../key-directory/index.js';

export type { HubIdentityRow } from './repo.js';

export { HUB_ADDRESS_PATTERN } from '@parley/protocol';
export { hubDid, normalizeHubAddress } from '../../lib/hub-address.js';

/**
 * Addresses no identity can register (409, as if taken): the static path segments that share
 * `/hub/{segment}/…` with `/hub/{hub_address}/…` routes, so every registered address keeps all of
 * its routes reachable.
 */
export const ROUTE_RESERVED_ADDRESSES: readonly string[] = ['identities', 'register', 'resolve', 'search', 'credentials'];


/** The wire form of a stored identity (contract §2.8; `tier_source`, design §8.25). */
export const toHubIdentity = (h: repo.HubIdentityRow): HubIdentity => ({
  id: h.id,
  hub_address: h.hubAddress,
  did: hubDid(h.hubAddress),
  display_name: h.displayName,
  description: h.description,
  capabilities: h.capabilities as string[],
  public_key: h.publicKey,
  device_id: h.deviceId,
  trust_tier: h.trustTier as TrustTier,
  tier_source: h.tierSource as TierSource,
  created_at: h.createdAt.toISOString(),
});

/**
 * The tenant's identity at `address` (any case), read inside a {@link withTenant} transaction
 * (another tenant's identity is invisible); `forUpdate` locks the row.
 * @throws 404 malformed, unknown or another tenant's address.
 */
export async function ownIdentityAt(tx: Tx, address: string, forUpdate = false): Promise<repo.HubIdentityRow> {
  const hubAddress = normalizeHubAddress(address);
  const row = hubAddress ? await repo.getByAddress(tx, hubAddress, forUpdate) : undefined;
  if (!row) throw notFound('hub identity');
  return row;
}

export class HubService {
  private readonly reserved: ReadonlySet<string>;

  /**
   * @param reservedAddresses addresses no identity may register besides
   *   {@link ROUTE_RESERVED_ADDRESSES} (e.g. the platform issuer's own address, design §8.16).
   */
  /**
   * @param directory the key directory a new identity's DID keys are committed to (design §8.39).
   * @param reservedAddresses addresses no one may register (the platform issuer's).
   */
  constructor(
    private readonly db: Db,
    private readonly directory: KeyDirectory,
    reservedAddresses: Iterable<string> = [],
  ) {
    this.reserved = new Set([...ROUTE_RESERVED_ADDRESSES, ...[...reservedAddresses].map((a) => a.toLowerCase())]);
  }

  /**
   * Register an identity for the tenant. The address is lowercased; capability names are
   * de-duplicated (order kept); `public_key` must be the base64 of a valid Ed25519 public key
   * (a curve point outside the small-order subgroup, see ed25519.ts). The search document is
   * written in the same transaction, and so is the `hub.registered` audit event by `createdBy`.
   * @throws 400 malformed address or invalid `public_key`; 404 `device_id` unknown in this
   *   tenant; 400 not an agent device; 409 device not ACTIVE, device already bound to an
   *   identity, address reserved or taken (platform-wide).
   */
  async register(tenantId: string, createdBy: string, input: RegisterHubRequest): Promise<HubIdentity> {
    const hubAddress = this.newAddress(input.hub_address, input.public_key, 'hub_address must be 3-32 characters of a-z, 0-9 and "-", not starting or ending with "-"');
    const deviceId = input.device_id?.toLowerCase() ?? null;
    return this.whileAddressFree(hubAddress, () =>
      withTenant(this.db, tenantId, async (tx) => {
        if (deviceId) await this.checkBindable(tx, deviceId);
        const row = await this.insertIdentity(tx, {
          tenantId,
          hubAddress,
          deviceId,
          apiKeyId: null,
          displayName: input.display_name,
          description: input.description ?? null,
          publicKey: input.public_key ?? null,
          capabilities: input.capabilities ?? [],
          createdBy,
        });
        return toHubIdentity(row);
      }),
    );
  }

  /**
   * The stored form of a new identity's address, checked: well formed, not reserved, and
   * `publicKey` (when given) a valid Ed25519 owner key (ed25519.ts).
   * @throws 400 `malformed` (the message naming the field) or invalid `public_key`; 409 reserved.
   */
  newAddress(address: string, publicKey: string | undefined, malformed: string): string {
    const hubAddress = normalizeHubAddress(address);
    if (!hubAddress) throw badRequest(malformed);
    if (this.reserved.has(hubAddress)) throw conflict(`hub address ${hubAddress} is reserved`);
    if (publicKey !== undefined && !decodeOwnerKey(publicKey)) throw badRequest('public_key must be the base64 of a valid 32-byte Ed25519 public key (a curve point, not of small order)');
    return hubAddress;
  }

  /**
   * Insert a new identity in `tx` with its search document and the `hub.registered` audit event
   * (data: address, device, whether it has an owner key, and `api_key_id` when a key is bound);
   * capability names are de-duplicated, order kept. Run inside {@link whileAddressFree}.
   */
  async insertIdentity(
    tx: Tx,
    f: { tenantId: string; hubAddress: string; deviceId: string | null; apiKeyId: string | null; displayName: string; description: string | null; publicKey: string | null; capabilities: readonly string[]; createdBy: string },
  ): Promise<repo.HubIdentityRow> {
    const [row] = await repo.insertHubIdentity(tx, { id: randomUUID(), ...f, capabilities: [...new Set(f.capabilities)] });
    await repo.refreshSearchDocument(tx, row!.id);
    await commitDidKeys(tx, this.directory, row!.id);
    const data = { hub_address: f.hubAddress, device_id: f.deviceId, owner_key: row!.publicKey !== null, ...(f.apiKeyId ? { api_key_id: f.apiKeyId } : {}) };
    await appendAudit(tx, f.tenantId, { type: 'hub.registered', actor: f.createdBy, subject: row!.id, data });
    return row!;
  }

  /** Run `work` (a registration of `hubAddress`), answering 409 when the address is taken platform-wide meanwhile. */
  async whileAddressFree<T>(hubAddress: string, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (err) {
      if (repo.isUniqueViolation(err, 'hub_identities_address_idx')) throw conflict(`hub address ${hubAddress} is already registered`);
      throw err;
    }
  }

  /** The tenant's identities, oldest first. */
  list(tenantId: string): Promise<HubIdentity[]> {
    return withTenant(this.db, tenantId, async (tx) => (await repo.listHubIdentities(tx)).map(toHubIdentity));
  }

  /** One identity of the tenant. @throws 404 unknown or another tenant's. */
  async get(tenantId: string, id: string): Promise<HubIdentity> {
    const row = await withTenant(this.db, tenantId, (tx) => repo.getHubIdentity(tx, id));
    if (!row) throw notFound('hub identity');
    return toHubIdentity(row);
  }

  /**
   * The identity registered under `address` (any case), in any tenant, or null (also for a
   * malformed address). Used by A2A channel requests, which name the responder by address.
   */
  async findByAddress(address: string): Promise<repo.HubIdentityRow | null> {
    const hubAddress = normalizeHubAddress(address);
    if (!hubAddress) return null;
    const row = await crossTenant(this.db, 'hub addresses are public and unique platform-wide (contract §2.8)', (tx) => repo.getByAddress(tx, hubAddress));
    return row ?? null;
  }

  /** The identity bound to `deviceId`, or null; runs in the caller's (tenant-scoped) transaction. */
  async findByDevice(tx: Tx, deviceId: string): Promise<repo.HubIdentityRow | null> {
    return (await repo.getByDevice(tx, deviceId)) ?? null;
  }

  /** design §8.18: an ACTIVE agent device of the tenant with no identity yet (row locked so concurrent binds serialize). */
  private async checkBindable(tx: Tx, deviceId: string): Promise<void> {
    const d = await getDevice(tx, deviceId, true);
    if (!d) throw notFound('device');
    if (d.kind !== 'agent') throw badRequest('device_id must name an agent device');
    if (d.status !== 'ACTIVE') throw conflict(`device is ${d.status}; only an ACTIVE agent device can be bound`);
    if (await repo.getByDevice(tx, deviceId)) throw conflict('this device is already bound to a hub identity');
  }
}

/**
 * Internals shared by the A2A operation files (channels.ts, key-exchange.ts, messages.ts): the
 * service's dependencies and channel-facts cache ({@link A2aCore}), the wire mappings, the party
 * helpers and the agreement (or rental) gate; envelopes are decoded and encoded by lib/envelope.ts.
 * Not part of the module's public surface beyond what index.ts re-exports.
 */
import { randomBytes } from 'node:crypto';
import type { A2aChannel, A2aMessage } from '@parley/protocol';
import type { Db, Tx } from '../../db/client.js';
import { switchTenant, withTenant } from '../../db/tenant.js';
import { BoundedCache } from '../../lib/bounded-cache.js';
import { blobsOut } from '../../lib/envelope.js';
import { badRequest, forbidden, notFound } from '../../lib/errors.js';
import type { Notifier } from '../../realtime/notifier.js';
import type { FederationService } from '../federation/index.js';
import type { HubService } from '../hub/index.js';
import { getRental } from '../marketplace/index.js';
import type { HeldReleaser, PolicyDecider } from '../policies/index.js';
import * as repo from './repo.js';

/** The policy module as A2A uses it: the decider contract plus the releaser registry. */
export interface A2aPolicies extends PolicyDecider {
  registerReleaser(kind: 'a2a', fn: HeldReleaser): void;
}

export interface A2aDeps {
  db: Db;
  notifier: Notifier;
  hubs: Pick<HubService, 'findByAddress' | 'findByDevice'>;
  federation: Pick<FederationService, 'activeAgreementBetween'>;
  policies: A2aPolicies;
  /** Largest accepted `ciphertext` (bytes, after base64 decoding); 413 above. */
  maxCiphertextBytes: number;
  /** History page size: default and maximum `limit`. */
  listDefault: number;
  listMax: number;
}

/**
 * Who acts on a channel route: an owner of a tenant, or an agent device (device JWT or API key).
 * `actor` is the audit actor of the principal (audit/parties.ts `auditActor`).
 */
export type A2aActor = { kind: 'owner'; tenantId: string; actor: string } | { kind: 'agent'; tenantId: string; deviceId: string; actor: string };

/** The agent device behind a frame or an agent REST call. */
export interface A2aSender {
  tenantId: string;
  deviceId: string;
}

/** The immutable parties of a channel and the rental behind it, if any (cached per viewing tenant). */
export type ChannelFacts = Pick<
  repo.ChannelRow,
  'id' | 'tenantId' | 'partnerTenantId' | 'initiatorDeviceId' | 'responderDeviceId' | 'initiatorHubAddress' | 'responderHubAddress' | 'rentalId'
>;
export type Role = 'initiator' | 'responder';

/** What every operation works with: the service's dependencies and the channel-facts cache. */
export interface A2aCore {
  deps: A2aDeps;
  facts: BoundedCache<ChannelFacts>;
}

/** A fresh core (one per service). */
export const newCore = (deps: A2aDeps): A2aCore => ({ deps, facts: new BoundedCache<ChannelFacts>(50_000) });

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$/;

/** Map a stored channel to its wire form. */
export function toChannelOut(c: repo.ChannelRow): A2aChannel {
  return {
    channelId: c.id,
    initiatorHubAddress: c.initiatorHubAddress,
    responderHubAddress: c.responderHubAddress,
    conversationId: c.conversationId,
    status: c.status as repo.ChannelStatus,
    capability: c.capability,
    federated: c.tenantId !== c.partnerTenantId,
    agreementId: c.agreementId,
    rentalId: c.rentalId,
    createdAt: c.createdAt.toISOString(),
    approvedAt: c.approvedAt?.toISOString() ?? null,
    activatedAt: c.activatedAt?.toISOString() ?? null,
  };
}

export function toMessageOut(m: repo.A2aMessageRow): A2aMessage {
  return {
    channel_id: m.channelId,
    message_id: m.id,
    sender_device_id: m.senderDeviceId,
    ...blobsOut(m),
    message_type: m.messageType,
    priority: m.priority,
    timestamp: m.createdAt.toISOString(),
    traceparent: m.traceparent,
    cursor: String(m.seq),
  };
}

/**
 * Validate a W3C Trace Context `traceparent` (version 00, lowercase hex, trace-id and parent-id
 * not all zeros). @throws 400 otherwise.
 */
export function checkTraceparent(v: string): string {
  const m = TRACEPARENT.exec(v);
  if (!m || /^0+$/.test(m[1]!) || /^0+$/.test(m[2]!)) {
    throw badRequest('traceparent must be W3C Trace Context "00-<32 hex trace-id>-<16 hex parent-id>-<2 hex flags>" (lowercase; ids not all zeros)');
  }
  return v;
}

/** A fresh sampled `traceparent` with random trace and parent ids. */
export function newTraceparent(): string {
  return `00-${randomBytes(16).toString('hex')}-${randomBytes(8).toString('hex')}-01`;
}

export const isFederated = (c: ChannelFacts) => c.tenantId !== c.partnerTenantId;

/** The party side of `deviceId`. @throws 403 when the device is not one of the two agents. */
export function roleOf(c: ChannelFacts, deviceId: string): Role {
  if (deviceId === c.initiatorDeviceId) return 'initiator';
  if (deviceId === c.responderDeviceId) return 'responder';
  throw forbidden('this agent is not a party of the channel');
}

/** The other side of `role`: its device, tenant and hub address. */
export function peerOf(c: ChannelFacts, role: Role) {
  return role === 'initiator'
    ? { deviceId: c.responderDeviceId, tenantId: c.partnerTenantId, hubAddress: c.responderHubAddress }
    : { deviceId: c.initiatorDeviceId, tenantId: c.tenantId, hubAddress: c.initiatorHubAddress };
}

/**
 * Run `fn` with the transaction scoped to `tenantId`, then return to `home` (no switch when they
 * are equal). On failure the transaction rolls back, so the scope needs no restoring.
 */
export async function inScope<T>(tx: Tx, home: string, tenantId: string, fn: () => Promise<T>): Promise<T> {
  if (tenantId === home) return fn();
  await switchTenant(tx, tenantId);
  const out = await fn();
  await switchTenant(tx, home);
  return out;
}

/** The immutable parties of a channel visible to `tenantId` (cached). @throws 404. */
export async function factsOf(core: A2aCore, tenantId: string, id: string): Promise<ChannelFacts> {
  const facts = await core.facts.through(`${tenantId}:${id}`, async () => {
    const c = await withTenant(core.deps.db, tenantId, (tx) => repo.getChannel(tx, id));
    if (!c) return undefined;
    return {
      id: c.id,
      tenantId: c.tenantId,
      partnerTenantId: c.partnerTenantId,
      initiatorDeviceId: c.initiatorDeviceId,
      responderDeviceId: c.responderDeviceId,
      initiatorHubAddress: c.initiatorHubAddress,
      responderHubAddress: c.responderHubAddress,
      rentalId: c.rentalId,
    };
  });
  if (!facts) throw notFound('channel');
  return facts;
}

/**
 * A federated channel carries traffic only while what authorized it holds: its marketplace rental
 * is `active` (a rental-backed channel, docs/decisions.md "A2A channels backed by rentals"; an
 * agreement does not stand in for it), otherwise an active federation agreement between the two
 * tenants. @throws 403 once the rental left `active` (the detail names its status), or the
 * agreement expired or was revoked.
 */
export async function agreementGate(core: A2aCore, c: ChannelFacts): Promise<void> {
  if (!isFederated(c)) return;
  if (c.rentalId) {
    const rentalId = c.rentalId;
    // The rental is a two-party row of exactly the channel's two tenants: the initiator's (renter's) scope sees it.
    const r = await withTenant(core.deps.db, c.tenantId, (tx) => getRental(tx, rentalId));
    const status = r && r.tenantId === c.tenantId && r.partnerTenantId === c.partnerTenantId ? r.status : 'gone';
    if (status !== 'active') throw forbidden(`the rental ${rentalId} behind this channel is ${status}: the channel carries no traffic unless the rental is active`);
    return;
  }
  if (!(await core.deps.federation.activeAgreementBetween(c.tenantId, c.partnerTenantId))) {
    throw forbidden('the federation agreement between the two tenants has expired or was revoked: this federated channel is closed to traffic until it is renewed');
  }
}

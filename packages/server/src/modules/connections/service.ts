/**
 * Connections (contract §4.10): everything the owner's tenant is linked to, in one list — its agent
 * devices (`device`), the A2A channels it is a party to on either side (`a2a_channel`) and its
 * federation agreements as proposer or partner (`federation`) — plus the caller's own owner
 * devices with health and presence (`/owner-connections`).
 *
 * Status values keep each resource's own names: devices the uppercase contract §2.3 names, A2A
 * channels contract §2.11's, agreements `pending` | `active` | `revoked` | `expired` (derived from
 * `expires_at`). Another tenant's rows are invisible (RLS), so their ids answer 404.
 */
import type { Connection, ConnectionA2aChannel, ConnectionDetail, ConnectionFederation, ConnectionType, OwnerConnection } from '@parley/protocol';
import type { OwnerPrincipal } from '../../auth/authenticator.js';
import type { Db } from '../../db/client.js';
import { crossTenant, withTenant } from '../../db/tenant.js';
import { notFound } from '../../lib/errors.js';
import { type DeviceRow, getDevice, type Presence, toDeviceOut } from '../devices/index.js';
import { getChannel, listChannels, type ChannelRow } from '../a2a/index.js';
import { type AgreementRow, listAgreements, statusOf } from '../federation/index.js';
import * as repo from './repo.js';


const iso = (d: Date | null) => d?.toISOString() ?? null;

const deviceConnection = (d: DeviceRow): Connection => ({
  connection_id: d.id,
  type: 'device',
  status: d.status,
  label: d.name,
  created_at: d.enrolledAt.toISOString(),
  last_seen: iso(d.lastSeen),
});

/** The side(s) of a channel the tenant is on. */
function sideOf(c: ChannelRow, tenantId: string): { initiator: boolean; responder: boolean } {
  return { initiator: c.tenantId === tenantId, responder: c.partnerTenantId === tenantId };
}

function channelConnection(c: ChannelRow, tenantId: string): Connection {
  const side = sideOf(c, tenantId);
  return {
    connection_id: c.id,
    type: 'a2a_channel',
    status: c.status,
    label: `${c.initiatorHubAddress} → ${c.responderHubAddress}`,
    peer: side.initiator ? c.responderHubAddress : c.initiatorHubAddress,
    created_at: c.createdAt.toISOString(),
  };
}

function channelDetail(c: ChannelRow, tenantId: string): ConnectionA2aChannel {
  const side = sideOf(c, tenantId);
  return {
    channel_id: c.id,
    direction: side.initiator && side.responder ? 'internal' : side.initiator ? 'outbound' : 'inbound',
    initiator_hub_address: c.initiatorHubAddress,
    responder_hub_address: c.responderHubAddress,
    initiator_device_id: side.initiator ? c.initiatorDeviceId : null,
    responder_device_id: side.responder ? c.responderDeviceId : null,
    conversation_id: c.conversationId,
    capability: c.capability,
    agreement_id: c.agreementId,
    approved_at: iso(c.approvedAt),
    activated_at: iso(c.activatedAt),
    closed_at: iso(c.closedAt),
    closed_reason: c.closedReason,
  };
}

/** The other tenant of an agreement, seen from `tenantId`. */
const peerTenant = (a: AgreementRow, tenantId: string) => (a.tenantId === tenantId ? a.partnerTenantId : a.tenantId);

function agreementConnection(a: AgreementRow, tenantId: string, names: Map<string, string>): Connection {
  const peer = peerTenant(a, tenantId);
  return {
    connection_id: a.id,
    type: 'federation',
    status: statusOf(a),
    label: `federation with ${names.get(peer) ?? peer}`,
    peer,
    created_at: a.createdAt.toISOString(),
  };
}

function agreementDetail(a: AgreementRow, tenantId: string, names: Map<string, string>): ConnectionFederation {
  return {
    agreement_id: a.id,
    direction: a.tenantId === tenantId ? 'proposed' : 'received',
    proposer_tenant_id: a.tenantId,
    partner_tenant_id: a.partnerTenantId,
    peer_tenant_name: names.get(peerTenant(a, tenantId)) ?? null,
    trust_floor: a.trustFloor,
    allowed_capabilities: a.allowedCapabilities as string[],
    audit_sharing: a.auditSharing,
    expires_at: a.expiresAt.toISOString(),
    accepted_at: iso(a.acceptedAt),
    revoked_at: iso(a.revokedAt),
  };
}

export class ConnectionService {
  constructor(
    private readonly db: Db,
    private readonly presence: Presence,
  ) {}

  /** `GET /connections`: every connection, newest first (ties by id); `type` keeps one kind only. */
  async list(tenantId: string, type?: ConnectionType): Promise<Connection[]> {
    const want = (t: ConnectionType) => !type || type === t;
    const { devs, channels, agreements } = await withTenant(this.db, tenantId, async (tx) => ({
      devs: want('device') ? await repo.listAgentDevices(tx) : [],
      channels: want('a2a_channel') ? await listChannels(tx, {}) : [],
      agreements: want('federation') ? await listAgreements(tx) : [],
    }));
    const names = await this.peerNames(agreements.map((a) => peerTenant(a, tenantId)));
    return [
      ...devs.map(deviceConnection),
      ...channels.map((c) => channelConnection(c, tenantId)),
      ...agreements.map((a) => agreementConnection(a, tenantId, names)),
    ].sort((x, y) => y.created_at.localeCompare(x.created_at) || y.connection_id.localeCompare(x.connection_id));
  }

  /** `GET /connections/{id}`: one connection with its details; 404 when unknown or another tenant's. */
  async get(tenantId: string, id: string): Promise<ConnectionDetail> {
    const found = await withTenant(this.db, tenantId, async (tx) => {
      const d = await getDevice(tx, id);
      if (d && d.kind === 'agent') return { device: d };
      const c = await getChannel(tx, id);
      if (c) return { channel: c };
      const a = await repo.getAgreement(tx, id);
      return a ? { agreement: a } : undefined;
    });
    if (found?.device) return { ...deviceConnection(found.device), device: toDeviceOut(found.device) };
    if (found?.channel) return { ...channelConnection(found.channel, tenantId), a2a_channel: channelDetail(found.channel, tenantId) };
    if (found?.agreement) {
      const names = await this.peerNames([peerTenant(found.agreement, tenantId)]);
      return { ...agreementConnection(found.agreement, tenantId, names), federation: agreementDetail(found.agreement, tenantId, names) };
    }
    throw notFound('connection');
  }

  /** `GET /owner-connections`: the caller's own owner devices with health, last_seen and presence. */
  async ownerConnections(owner: OwnerPrincipal & { tenantId: string }): Promise<OwnerConnection[]> {
    const rows = await withTenant(this.db, owner.tenantId, (tx) => repo.listOwnerDevicesOf(tx, owner.sub));
    const online = await this.presence.online(rows.map((d) => d.id));
    return rows.map((d) => ({ ...toDeviceOut(d), online: online.has(d.id) }));
  }

  /** Names of federation partners (ids taken from agreements the caller's tenant can see). */
  private peerNames(ids: string[]): Promise<Map<string, string>> {
    if (ids.length === 0) return Promise.resolve(new Map());
    return crossTenant(this.db, 'name the partner tenant of a federation agreement both tenants are party to', (tx) => repo.tenantNames(tx, [...new Set(ids)]));
  }
}

/**
 * Names next to the ids of the audit log (docs/decisions.md "Audit log hash chain", "Audit
 * coverage"). An event's `actor` is an owner's identity-provider subject, `device:<id>`,
 * `api_key:<id>`, `operator:<sub>` (a platform operator), `tenant:<id>` (the other party of a
 * marketplace event), `invite:<id>` or `system`; its `subject` is usually an id (a device, a hub
 * identity, an API key, an invite, a conversation…). This module turns each into what the owner
 * knows it by, from the lists the app already loads (devices, hub identities, API keys, invites),
 * keeping the raw value next to it.
 */
import { useQuery } from '@tanstack/react-query';
import { useMemo } from 'react';
import { useOwner } from '../app/owner-context';
import { useDeviceList } from './use-devices';

/** Where the names come from; each list may be missing (still loading, or failed). */
export interface AuditNameSources {
  devices?: readonly { device_id: string; name: string; kind?: string }[] | undefined;
  identities?: readonly { id: string; display_name: string; hub_address: string }[] | undefined;
  apiKeys?: readonly { id: string; name: string }[] | undefined;
  invites?: readonly { id: string; label: string | null }[] | undefined;
  /** The signed-in owner: its subject and e-mail address, shown as "you". */
  self?: { sub: string; email?: string | undefined } | undefined;
}

/** id → "what it is and its name", built once per set of lists. */
export type AuditNames = ReadonlyMap<string, string>;

/** The lookup table of `s`: devices ("agent x" / "owner device x"), hub identities, API keys, invites. */
export function auditNames(s: AuditNameSources): AuditNames {
  const m = new Map<string, string>();
  for (const k of s.apiKeys ?? []) m.set(k.id, `API key ${k.name}`);
  for (const i of s.invites ?? []) m.set(i.id, i.label ? `invite ${i.label}` : 'an invite');
  for (const h of s.identities ?? []) m.set(h.id, `${h.display_name} (${h.hub_address})`);
  for (const d of s.devices ?? []) if (d.name.trim()) m.set(d.device_id, `${d.kind === 'owner' ? 'owner device' : 'agent'} ${d.name}`);
  return m;
}

const PREFIXED = /^(device|api_key|invite|tenant|operator):(.+)$/;

/**
 * The readable name of an audit `actor` or `subject` (undefined when there is nothing better than
 * the raw value): a known id's name, "you" for the signed-in owner, "platform operator <sub>",
 * "another tenant", "the service" for `system`.
 */
export function auditLabel(names: AuditNames, ref: string | null | undefined, self?: AuditNameSources['self']): string | undefined {
  if (!ref) return undefined;
  if (ref === 'system') return 'the service';
  if (self && ref === self.sub) return self.email && self.email !== ref ? `you (${self.email})` : 'you';
  const m = PREFIXED.exec(ref);
  if (!m) return names.get(ref);
  const [, kind, id] = m as unknown as [string, string, string];
  if (kind === 'operator') return `platform operator ${id}`;
  if (kind === 'tenant') return 'another tenant';
  const known = names.get(id);
  if (known) return known;
  return kind === 'api_key' ? 'an API key' : kind === 'invite' ? 'an invite' : undefined;
}

/** The names of the signed-in owner's tenant for the audit screen (lists shared with the other screens' queries). */
export function useAuditNames(): { names: AuditNames; self: AuditNameSources['self'] } {
  const { client, session } = useOwner();
  const devices = useDeviceList().data;
  const identities = useQuery({ queryKey: ['devices', 'hub-identities'], queryFn: async () => (await client.listHubIdentities()).identities }).data;
  const apiKeys = useQuery({ queryKey: ['api-keys'], queryFn: async () => (await client.listApiKeys()).api_keys }).data;
  const invites = useQuery({ queryKey: ['invites'], queryFn: () => client.listInvites() }).data?.invites;
  const names = useMemo(() => auditNames({ devices, identities, apiKeys, invites }), [devices, identities, apiKeys, invites]);
  const self = session ? { sub: session.sub, email: session.email } : undefined;
  return { names, self };
}

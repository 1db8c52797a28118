/**
 * The owner's agents for the governance screens (design §8.18): agent devices past enrollment
 * with their names, and the hub address bound to each (trust and telemetry routes accept either
 * the device id or the hub address; the screens pass the device id). Query keys start with
 * `devices` so `device_*` socket events refresh them (lib/live.ts).
 */
import type { Device } from '@parley/sdk';
import { useQuery } from '@tanstack/react-query';
import { useOwner } from '../app/owner-context';
import { shortId } from './names';
import { useDeviceList } from './use-devices';

/** An agent as the pickers show it. */
export interface AgentEntry {
  id: string;
  name: string;
  status: Device['status'];
  hubAddress: string | null;
}

/** Agents (kind `agent`, not PENDING) sorted by name, each with its hub address when it has one. */
export function agentEntries(devices: readonly Device[], hubs: readonly { device_id: string | null; hub_address: string }[]): AgentEntry[] {
  const address = new Map(hubs.filter((h) => h.device_id).map((h) => [h.device_id!, h.hub_address]));
  return devices
    .filter((d) => d.kind === 'agent' && d.status !== 'PENDING')
    .map((d) => ({ id: d.device_id, name: d.name, status: d.status, hubAddress: address.get(d.device_id) ?? null }))
    .sort((a, b) => a.name.localeCompare(b.name) || a.id.localeCompare(b.id));
}

/** A readable name of an agent id: its device name, else its hub address, else a short id. */
export function agentLabel(agents: readonly AgentEntry[] | undefined, id: string, hubAddress?: string | null): string {
  const a = agents?.find((x) => x.id === id);
  if (a) return a.hubAddress ? `${a.name} (${a.hubAddress})` : a.name;
  return hubAddress ?? shortId(id);
}

/** The tenant's agents (design §8.18), with the first load's error (a hub-identity failure only loses the addresses). */
export function useAgents(): { agents: AgentEntry[] | undefined; error: unknown; isPending: boolean } {
  const { client } = useOwner();
  const devices = useDeviceList();
  const hubs = useQuery({ queryKey: ['devices', 'hub-identities'], queryFn: async () => (await client.listHubIdentities()).identities });
  return {
    agents: devices.data ? agentEntries(devices.data, hubs.data ?? []) : undefined,
    error: devices.error ?? undefined,
    isPending: devices.isPending,
  };
}

/**
 * Device lists as the Agents screen groups them (contract §2.3 states, design §7 list entries):
 * pending enrollments waiting for the owner's fingerprint check, agents (approved, active,
 * revoked), and owner devices.
 */
import type { Device } from '@parley/sdk';

export interface DeviceGroups {
  /** Agents that enrolled with an invite and wait for approval (PENDING). */
  pending: Device[];
  /** Agents past approval (APPROVED, ACTIVE, REVOKED), active first, then by name. */
  agents: Device[];
  /** The owner's devices (browsers, apps). */
  owners: Device[];
}

const ORDER: Record<string, number> = { ACTIVE: 0, APPROVED: 1, REVOKED: 2 };

/** Split and order a device list (see {@link DeviceGroups}). */
export function groupDevices(devices: Device[]): DeviceGroups {
  const agents = devices.filter((d) => d.kind === 'agent');
  return {
    pending: agents.filter((d) => d.status === 'PENDING').sort((a, b) => a.enrolled_at.localeCompare(b.enrolled_at)),
    agents: agents
      .filter((d) => d.status !== 'PENDING')
      .sort((a, b) => (ORDER[a.status] ?? 9) - (ORDER[b.status] ?? 9) || a.name.localeCompare(b.name)),
    owners: devices.filter((d) => d.kind === 'owner'),
  };
}

/**
 * Agent references in owner routes (design §8.18): the `{hub_id}` of telemetry routes and the
 * `{agent_id}` of trust routes accept an agent's `device_id` or the hub address of the identity
 * bound to it. One resolution for both, inside the caller's tenant-scoped transaction, so another
 * tenant's agent (RLS hides it), an owner device, a deleted device and an identity bound to no
 * device are all "agent not found" (404).
 */
import type { Tx } from '../../db/client.js';
import { notFound } from '../../lib/errors.js';
import { asUuid } from '../../lib/ids.js';
import { getByAddress, getByDevice, type HubIdentityRow } from './repo.js';
import { getDevice, type DeviceRow } from '../devices/index.js';

/** A resolved agent: its (not deleted, kind `agent`) device and the hub identity bound to it, if any. */
export interface AgentRef {
  device: DeviceRow;
  identity: HubIdentityRow | undefined;
}

/**
 * Resolve `ref` (a device UUID in any case, or a hub address in any case) to one of the tenant's
 * agents. A UUID is tried as a device id first, then as an address.
 * @throws 404 `agent not found` when it names no agent of this tenant.
 */
export async function resolveAgent(tx: Tx, ref: string): Promise<AgentRef> {
  const id = asUuid(ref);
  if (id) {
    const device = await getDevice(tx, id);
    if (device?.kind === 'agent') return { device, identity: await getByDevice(tx, device.id) };
  }
  const identity = await getByAddress(tx, ref.toLowerCase());
  if (identity?.deviceId) {
    const device = await getDevice(tx, identity.deviceId);
    if (device?.kind === 'agent') return { device, identity };
  }
  throw notFound('agent');
}

/** {@link resolveAgent}, only the device id (telemetry routes). @throws 404 as there. */
export async function resolveAgentId(tx: Tx, ref: string): Promise<string> {
  return (await resolveAgent(tx, ref)).device.id;
}

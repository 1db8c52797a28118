/**
 * Device names for room members, held messages and decisions (design §8.5 members are device ids;
 * §8.19 decisions name their agent by device id): a device id → name map from the device list,
 * with a short id for devices the list does not hold (removed, or another tenant's).
 */

/** The fields of a device the labels need (a `Device` of `listDevices` fits). */
export interface NamedDevice {
  device_id: string;
  name: string;
}

/** Device id → name. */
export type NameMap = ReadonlyMap<string, string>;

/** The map of a device list (contract §4.4 `GET /devices`; empty while it loads). */
export function nameMap(devices: readonly NamedDevice[] | undefined): NameMap {
  return new Map((devices ?? []).map((d) => [d.device_id, d.name]));
}

/** The first 8 characters of an id and an ellipsis ("3f2a9c1b…"); shorter ids as they are (design §8.5 labels). */
export function shortId(id: string): string {
  return id.length > 8 ? `${id.slice(0, 8)}…` : id;
}

/** A device's name, or its short id when unknown or blank (design §8.5 members, §8.19 agents). */
export function nameOf(names: NameMap, id: string | null | undefined): string {
  if (!id) return '—';
  const name = names.get(id)?.trim();
  return name ? name : shortId(id);
}

/** The names of a pair of devices (a room's pairwise session, design §8.5), e.g. "alpha ↔ beta". */
export function pairLabel(names: NameMap, ids: readonly string[]): string {
  return ids.map((id) => nameOf(names, id)).join(' ↔ ');
}

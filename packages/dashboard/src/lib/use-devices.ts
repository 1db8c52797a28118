/**
 * The tenant's devices for the governance screens (design §8.5 room members, §8.19 the agent of a
 * decision): the list and the id → name map of `names.ts`. Query key root `devices`, so
 * `device_*` socket events refresh it.
 */
import type { Device } from '@parley/sdk';
import { useQuery } from '@tanstack/react-query';
import { useMemo } from 'react';
import { useOwner } from '../app/owner-context';
import { nameMap, type NameMap } from './names';

/** `listDevices` (contract §4.4) as a query. */
export function useDeviceList() {
  const { client } = useOwner();
  return useQuery({ queryKey: ['devices', 'all'], queryFn: async (): Promise<Device[]> => (await client.listDevices()).devices });
}

/** Device id → name for the tenant's devices (contract §4.4; design §8.5; empty while loading). */
export function useDeviceNames(): NameMap {
  const devices = useDeviceList().data;
  return useMemo(() => nameMap(devices), [devices]);
}

/**
 * Rooms (contract §2.5, §4.6, §6.1; design §8.5; see service.ts): the area's public surface.
 * Routes and frames call the room operations with the area's {@link RoomContext}; team rooms
 * create rooms through {@link createRoom}. `close()` waits for the queued sends.
 */
import type { RoomSecurityLevel } from '@parley/protocol';
import { API_PREFIX, type Area, type Platform } from '../../http/area.js';
import type { SettingsService } from '../settings/index.js';
import { registerRoomFrames } from './frames.js';
import type { RoomContext, RoomPolicies, RoomServiceDeps } from './internal.js';
import { roomRoutes } from './routes.js';
import { openRooms } from './service.js';

export { createRoom } from './management.js';
export type { RoomContext } from './internal.js';

/** The rooms area and its context. */
export interface RoomsArea extends Area {
  rooms: RoomContext;
}

/** Rooms whose default security level is the tenant's setting; `deliveries` hears of envelopes a member fetched. */
export function createRooms(d: Platform & { policies: RoomPolicies; settings: Pick<SettingsService, 'read'>; deliveries: RoomServiceDeps['deliveries'] }): RoomsArea {
  const { limits } = d.config;
  const defaultSecurityLevel = async (tx: Parameters<SettingsService['read']>[0], tenantId: string): Promise<RoomSecurityLevel> => (await d.settings.read(tx, tenantId)).default_room_security_level;
  const rooms = openRooms({
    db: d.db,
    notifier: d.notifier,
    policies: d.policies,
    defaultSecurityLevel,
    maxCiphertextBytes: limits.maxCiphertextBytes,
    listDefault: limits.listDefault,
    listMax: limits.listMax,
    writer: d.writer,
    ...(d.deliveries ? { deliveries: d.deliveries } : {}),
  });
  return {
    rooms,
    frames: (gateway) => registerRoomFrames(gateway, rooms),
    async routes(app) {
      await app.register(roomRoutes, { prefix: API_PREFIX, rooms, messageRate: d.messageRate });
    },
    close: () => rooms.sends.drain(),
  };
}

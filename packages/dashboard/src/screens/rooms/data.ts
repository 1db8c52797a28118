/**
 * Queries of the Rooms screen (contract §4.6, §4.9; design §8.3, §8.5). Every key starts with a root
 * of `lib/live.ts` (`rooms`, `held`, `policies`), so `room_*`, `member_*` and `policy_alert`
 * socket events refresh them.
 */
import type { RoomTimelinePage } from '@parley/sdk';
import { useInfiniteQuery, useQuery } from '@tanstack/react-query';
import { useOwner } from '../../app/owner-context';

/** Timeline entries per page. */
export const TIMELINE_PAGE = 50;

/** The tenant's active rooms (`listRooms`, contract §4.6). */
export function useRooms() {
  const { client } = useOwner();
  return useQuery({ queryKey: ['rooms'], queryFn: async () => (await client.listRooms()).rooms });
}

/** One room with its members and pairwise conversations (`getRoom`, contract §4.6; design §8.5). */
export function useRoom(roomId: string) {
  const { client } = useOwner();
  return useQuery({ queryKey: ['rooms', roomId], queryFn: () => client.getRoom(roomId) });
}

/** The room timeline in send order (`roomTimeline`, owner view: metadata, no content; design §8.5), page by page. */
export function useTimeline(roomId: string) {
  const { client } = useOwner();
  return useInfiniteQuery({
    queryKey: ['rooms', roomId, 'timeline'],
    initialPageParam: undefined as string | undefined,
    queryFn: ({ pageParam }) => client.roomTimeline(roomId, { view: 'owner', limit: TIMELINE_PAGE, ...(pageParam ? { since: pageParam } : {}) }),
    getNextPageParam: (last: RoomTimelinePage) => (last.messages.length >= TIMELINE_PAGE ? (last.next_cursor ?? undefined) : undefined),
  });
}

/** The tenant's policies (`listPolicies`, contract §4.9). */
export function usePolicies() {
  const { client } = useOwner();
  return useQuery({ queryKey: ['policies'], queryFn: async () => (await client.listPolicies()).policies });
}

/** Held messages awaiting approval (`listHeldMessages`, status `held`; design §8.3), all rooms and channels. */
export function useHeld() {
  const { client } = useOwner();
  return useQuery({ queryKey: ['held', 'held'], queryFn: () => client.listHeldMessages({ status: 'held' }) });
}

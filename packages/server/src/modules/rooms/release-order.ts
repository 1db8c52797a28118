/**
 * Publish order of room messages (design §8.5), per room and per instance.
 *
 * A room's release positions are taken under a per-room lock held until commit
 * (`repo.insertAtNextPositionsStatement`, and the held-release path), so position N's transaction
 * commits before N+1's takes the lock. The sends then publish their frames after commit, and two
 * sends' continuations could in principle run in either order. A {@link Turn} taken as soon as
 * the positions are known (the group-commit flush enters its messages' turns in position order,
 * flushes of a tenant answer one after the other, flush.ts) makes a send wait for every earlier
 * send of the room on this instance before it publishes: recipients get a room's `room_message`
 * frames in release-position order, and one sender's messages in send order.
 */

/** A place in a room's publish queue. */
export interface Turn {
  /** Resolves once every earlier turn of the room is done. */
  ready: Promise<void>;
  /** Mark this turn done (published, or abandoned because the send failed). Idempotent. */
  done(): void;
}

/** Per-room publish queues of one instance (see the module comment); one per room context (`openRooms`, service.ts). */
export class ReleaseOrder {
  /** Per room: resolves when the newest turn and every earlier one are done (absent when nothing is queued). */
  private readonly tails = new Map<string, Promise<void>>();

  /**
   * Enter `roomId`'s queue. Call synchronously after the release position was taken, and always
   * call `done()` (a turn never done stalls the room's later publishes on this instance).
   */
  enter(roomId: string): Turn {
    const ready = this.tails.get(roomId) ?? Promise.resolve();
    let done!: () => void;
    const finished = new Promise<void>((resolve) => (done = resolve));
    // The next turn waits for this one AND every earlier one (a failed send may finish early).
    const tail = Promise.all([ready, finished]).then(() => {
      if (this.tails.get(roomId) === tail) this.tails.delete(roomId);
    });
    this.tails.set(roomId, tail);
    return { ready, done };
  }
}

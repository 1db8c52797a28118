/**
 * Types shared by the room fan-out benchmark's orchestrator (run.ts), its load generator (load.ts,
 * a child process) and the bare `ws` fan-out baseline (bare-fanout.ts). Wire shapes: design §8.5.
 */
import type { LatencySummary, LoadSpecBase, LoadTotals } from '../relay/common.js';

/** One room member: its device and the WebSocket URL its socket connects to (credentials included). */
export interface RoomMember {
  deviceId: string;
  url: string;
}

/** What the parent asks the load generator to do (`window`: unacknowledged `room_message` frames per sender). */
export interface RoomLoadSpec extends LoadSpecBase {
  roomId: string;
  /** Every member gets one socket; each room message carries one envelope per other member. */
  members: RoomMember[];
  /** The first `senders` members send; all members receive. */
  senders: number;
  /** `message_type` of every room message ('text'; the policies scenario's policies match only 'artifact'). */
  messageType: string;
  /**
   * When set, the `paced` phase offers this fraction of the room messages/s the scenario's
   * `saturation` phase measured just before (its spec's `rate` is replaced).
   */
  pacedFraction?: number;
}

/** One measured phase of a room scenario. */
export interface RoomPhaseResult {
  name: string;
  /** Offered room messages/s over all senders (open loop); undefined = closed loop. */
  rate: number | undefined;
  measuredMs: number;
  /** `room_message_ack` frames received inside the measured window. */
  roomMessages: number;
  roomMsgsPerSec: number;
  /** `room_message` frames received by recipients inside the measured window. */
  deliveries: number;
  deliveriesPerSec: number;
  /**
   * Send (or scheduled send, open loop) -> a recipient's `room_message` frame, one sample per
   * delivery of a room message sent in the window.
   */
  latency: LatencySummary;
  /** CPU time (user + system) the load generator used inside the measured window. */
  clientCpuMs: number;
}

/**
 * A room scenario's outcome. `sent`/`acked` count room messages (`room_message_ack` frames),
 * `delivered` the `room_message` frames recipients received; `drained`: every room message was
 * acknowledged and every announced delivery received before each drain timed out.
 */
export interface RoomLoadResult extends LoadTotals {
  label: string;
  sockets: number;
  /** Deliveries the acks announced (outcome `delivered` or `notified`): the `room_message` frames to expect. */
  expectedDeliveries: number;
  /** Deliveries whose outcome was `held` or `blocked`. */
  withheld: number;
  phases: RoomPhaseResult[];
}

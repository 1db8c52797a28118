/**
 * The room fan-out benchmark's load generator. run.ts forks it as a separate Node process (so the
 * server's event loop is not shared with the clients), sends one `run` message over IPC and gets
 * one `result` back.
 *
 * One socket per room member. Each sender sends `room_message` frames carrying one envelope per
 * other member (a 24-byte header + a random ciphertext each) and keeps at most `window` of them
 * unacknowledged. Phases run one after the other on the same sockets with a full drain in between:
 * `saturation` (closed loop: send whenever the window allows) and, optionally, `paced` (open
 * loop: the senders together offer `rate` room messages/s, or `pacedFraction` of the saturation
 * phase's measured rate, on a fixed schedule; latency counts from the scheduled send time, so
 * waiting for a window slot is included).
 *
 * The sockets, the window and the phases are bench/relay/ws-load.ts's, shared with the relay benchmark.
 * The send time travels in every envelope's header (bench/relay/common.ts `encodeHeader`), and all
 * sockets live in this process, so each recipient measures send -> receipt on one clock. Counted
 * inside the measured window: `room_message_ack` frames (room messages) and `room_message` frames
 * received by recipients (deliveries).
 */
import { randomBytes } from 'node:crypto';
import { encodeHeader } from '../relay/common.js';
import { serveLoad } from '../relay/phase.js';
import { WsLoad } from '../relay/ws-load.js';
import type { RoomLoadResult, RoomLoadSpec, RoomPhaseResult } from './common.js';

/** What a member's socket sends: its room_message frame, split around the per-message parts. */
interface Out {
  /** Per other member: the envelope's JSON up to the header value. */
  envelopeHeads: string[];
  /** The envelope's JSON after the header value (this sender's ciphertext). */
  envelopeTail: string;
}

interface Ack {
  deliveries?: { outcome?: string }[];
}

async function run(spec: RoomLoadSpec): Promise<RoomLoadResult> {
  let ackedInWindow = 0;
  let expectedDeliveries = 0;
  let withheld = 0;
  const frameHead = `{"event":"room_message","data":{"room_id":${JSON.stringify(spec.roomId)},"message_type":${JSON.stringify(spec.messageType)},"priority":"normal","client_ref":"`;
  const load: WsLoad<Out> = new WsLoad<Out>(spec.window, {
    delivery: { event: 'room_message', header: 'header' },
    ack: 'room_message_ack',
    send: (ep, at) => {
      const header = encodeHeader(at, ep.index, ep.seq).toString('base64');
      let envelopes = '';
      for (const head of ep.out.envelopeHeads) envelopes += (envelopes ? ',' : '') + head + header + ep.out.envelopeTail;
      ep.ws.send(`${frameHead}${ep.seq}","envelopes":[${envelopes}]}}`);
    },
    onAck: (data, now) => {
      if (load.phase?.inWindow(now)) ackedInWindow++;
      for (const d of (data as Ack).deliveries ?? []) {
        if (d.outcome === 'delivered' || d.outcome === 'notified') expectedDeliveries++;
        else withheld++;
      }
    },
  });
  const connectMs = await load.connect(
    spec.members.map((member) => ({
      url: member.url,
      out: {
        envelopeHeads: spec.members.filter((m) => m !== member).map((m) => `{"recipient_device_id":"${m.deviceId}","header_blob":"`),
        envelopeTail: `","ciphertext":"${randomBytes(spec.ciphertextBytes).toString('base64')}"}`,
      },
    })),
  );
  const senders = load.sockets.slice(0, spec.senders);

  const results: RoomPhaseResult[] = [];
  let drained = true;
  for (const planned of spec.phases) {
    // A paced phase at a fraction of the saturation rate measured just before (run.ts --paced-fraction).
    const saturation = results.find((r) => r.name === 'saturation');
    const ps = planned.name === 'paced' && spec.pacedFraction && saturation ? { ...planned, rate: Math.max(1, spec.pacedFraction * saturation.roomMsgsPerSec) } : planned;
    ackedInWindow = 0;
    const { result: r, drained: ok } = await load.runPhase(ps, senders, spec.drainTimeoutMs, () => load.delivered >= expectedDeliveries);
    drained &&= ok;
    results.push({
      name: r.name,
      rate: r.rate,
      measuredMs: r.measuredMs,
      roomMessages: ackedInWindow,
      roomMsgsPerSec: (ackedInWindow / r.measuredMs) * 1000,
      deliveries: r.measuredMessages,
      deliveriesPerSec: r.msgsPerSec,
      latency: r.latency,
      clientCpuMs: r.clientCpuMs,
    });
  }
  await load.close();
  return { label: spec.label, sockets: load.sockets.length, ...load.totals(connectMs, drained), expectedDeliveries, withheld, phases: results };
}

serveLoad<RoomLoadSpec, RoomLoadResult>(run);

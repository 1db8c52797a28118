/**
 * The room fan-out benchmark's load generator. run.ts forks it as a separate Node process (so the
 * server's event loop is not shared with the clients), sends one `run` message over IPC and gets
 * one `result` back.
 *
 * One socket per room member. Each sender sends `room_message` frames carrying one envelope per
 * other member (a 24-byte header + a random ciphertext each) and keeps at most `window` of them
 * unacknowledged. Phases run one after the other on the same sockets with a full drain in between:
 * `saturation` (closed loop: send whenever the window allows) and, optionally, `paced` (open
 * loop: the senders together offer `rate` room messages/s on a fixed schedule; latency counts from
 * the scheduled send time, so waiting for a window slot is included).
 *
 * The send time travels in every envelope's header (bench/relay/common.ts `encodeHeader`), and all
 * sockets live in this process, so each recipient measures send -> receipt on one clock. Counted
 * inside the measured window: `room_message_ack` frames (room messages) and `room_message` frames
 * received by recipients (deliveries).
 */
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import WebSocket from 'ws';
import { encodeHeader, headerSentAt, type ParentToChild } from '../relay/common.js';
import { Phase, reply, sleep, waitFor } from '../relay/phase.js';
import type { RoomLoadResult, RoomLoadSpec, RoomPhaseResult } from './common.js';

interface Endpoint {
  index: number;
  ws: WebSocket;
  /** Per other member: the envelope's JSON up to the header value. */
  envelopeHeads: string[];
  /** The envelope's JSON after the header value (this sender's ciphertext). */
  envelopeTail: string;
  inflight: number;
  seq: number;
  /** Open loop: scheduled time of this sender's next room message. */
  next: number;
}

interface Ack {
  deliveries?: { outcome?: string }[];
}

async function run(spec: RoomLoadSpec): Promise<RoomLoadResult> {
  const connectStart = performance.now();
  let phase: Phase | undefined;
  let ackedInWindow = 0;
  let interval = 0; // open loop: ms between two room messages of one sender
  let sent = 0;
  let acked = 0;
  let expectedDeliveries = 0;
  let withheld = 0;
  let delivered = 0;
  let errors = 0;
  let firstError: string | undefined;
  let closing = false;
  const endpoints: Endpoint[] = [];

  const frameHead = `{"event":"room_message","data":{"room_id":${JSON.stringify(spec.roomId)},"message_type":${JSON.stringify(spec.messageType)},"priority":"normal","client_ref":"`;
  const sendAt = (ep: Endpoint, at: number) => {
    ep.seq++;
    ep.inflight++;
    sent++;
    const header = encodeHeader(at, ep.index, ep.seq).toString('base64');
    let envelopes = '';
    for (const head of ep.envelopeHeads) envelopes += (envelopes ? ',' : '') + head + header + ep.envelopeTail;
    ep.ws.send(`${frameHead}${ep.seq}","envelopes":[${envelopes}]}}`);
  };
  const pump = (ep: Endpoint) => {
    const p = phase;
    if (!p?.running) return;
    if (p.spec.rate === undefined) {
      while (ep.inflight < spec.window) {
        const now = performance.now();
        if (!p.admit(now)) return;
        sendAt(ep, now);
      }
    } else {
      const now = performance.now();
      while (ep.inflight < spec.window && ep.next <= now) {
        if (!p.admit(ep.next)) return;
        sendAt(ep, ep.next);
        ep.next += interval;
      }
    }
  };
  const fail = (what: string) => {
    errors++;
    firstError ??= what;
  };

  const open = (index: number) =>
    new Promise<Endpoint>((resolve, reject) => {
      const member = spec.members[index]!;
      const ws = new WebSocket(member.url, { perMessageDeflate: false });
      const ciphertext = randomBytes(spec.ciphertextBytes).toString('base64');
      const ep: Endpoint = {
        index,
        ws,
        envelopeHeads: spec.members.filter((m) => m !== member).map((m) => `{"recipient_device_id":"${m.deviceId}","header_blob":"`),
        envelopeTail: `","ciphertext":"${ciphertext}"}`,
        inflight: 0,
        seq: 0,
        next: 0,
      };
      ws.on('open', () => resolve(ep));
      ws.on('error', reject);
      ws.on('close', (code, reason) => {
        if (!closing) fail(`socket ${index} closed ${code} ${reason.toString()}`);
      });
      ws.on('message', (raw) => {
        const now = performance.now();
        const frame = JSON.parse(raw.toString()) as { event: string; data: Record<string, unknown> };
        switch (frame.event) {
          case 'room_message':
            delivered++;
            phase?.record(headerSentAt(frame.data.header as string), now);
            return;
          case 'room_message_ack': {
            acked++;
            if (phase?.inWindow(now)) ackedInWindow++;
            for (const d of (frame.data as Ack).deliveries ?? []) {
              if (d.outcome === 'delivered' || d.outcome === 'notified') expectedDeliveries++;
              else withheld++;
            }
            ep.inflight--;
            return pump(ep);
          }
          case 'error':
            fail(JSON.stringify(frame.data));
            ep.inflight--;
            return pump(ep);
          case 'ping':
            ws.send('{"event":"pong","data":{}}');
            return;
          default:
            return;
        }
      });
    });

  for (let i = 0; i < spec.members.length; i++) endpoints.push(await open(i));
  // Parley authenticates after the upgrade; give it a moment so the first frames are not queued.
  await sleep(300);
  const connectMs = performance.now() - connectStart;
  const senders = endpoints.slice(0, spec.senders);

  const results: RoomPhaseResult[] = [];
  let drained = true;
  for (const ps of spec.phases) {
    const p = new Phase(ps, performance.now());
    phase = p;
    ackedInWindow = 0;
    let ticker: NodeJS.Timeout | undefined;
    if (ps.rate !== undefined) {
      interval = (1000 * senders.length) / ps.rate;
      // Spread the senders evenly over one interval so the offered load is smooth.
      senders.forEach((ep, k) => (ep.next = p.t0 + (interval * k) / senders.length));
      ticker = setInterval(() => {
        for (const ep of senders) pump(ep);
      }, 1);
    }
    const stopper = setTimeout(() => p.stop(performance.now()), ps.warmupMs + ps.durationMs + 5);
    for (const ep of senders) pump(ep);
    while (p.running) await sleep(20);
    clearTimeout(stopper);
    if (ticker) clearInterval(ticker);
    drained &&= await waitFor(() => senders.every((ep) => ep.inflight === 0) && delivered >= expectedDeliveries, spec.drainTimeoutMs);
    const r = p.result();
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
    phase = undefined;
  }
  closing = true;
  for (const ep of endpoints) ep.ws.close(1000);
  await sleep(50);

  return {
    label: spec.label,
    sockets: endpoints.length,
    connectMs,
    sent,
    acked,
    expectedDeliveries,
    withheld,
    delivered,
    errors,
    ...(firstError ? { firstError } : {}),
    drained,
    phases: results,
  };
}

// The parent died (e.g. interrupted): stop instead of loading a server that is gone.
process.on('disconnect', () => process.exit(1));
process.once('message', (msg: ParentToChild<RoomLoadSpec>) => {
  run(msg.spec).then(
    async (result) => {
      await reply<RoomLoadResult>({ type: 'result', result });
      process.exit(0);
    },
    async (err: unknown) => {
      await reply<RoomLoadResult>({ type: 'failed', error: err instanceof Error ? (err.stack ?? err.message) : String(err) });
      process.exit(1);
    },
  );
});

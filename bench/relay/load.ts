/**
 * The relay benchmark's load generator. run.ts forks it as a separate Node process (so the
 * server's event loop is not shared with the clients), sends one `run` message over IPC and gets
 * one `result` back. Each scenario runs its phases one after the other on the same connections,
 * with a full drain in between:
 *
 * - saturation (closed loop): every sender keeps `window` messages unacknowledged, as fast as the
 *   server acknowledges them: the most messages per second the system delivers.
 * - paced (open loop): the senders together offer `rate` msgs/s on a fixed schedule (still at most
 *   `window` unacknowledged per sender); latency is measured from each message's scheduled send
 *   time, so queueing behind a full window counts.
 *
 * ws mode (sockets, window and phases: ws-load.ts, shared with bench/rooms): two sockets per pair
 *   (agent, owner device); both send `message` frames on their conversation. Latency runs from the
 *   send (or scheduled send) to the recipient's `message` frame: the time travels in header_blob,
 *   and both sides live in this process (one clock).
 *   Throughput counts `message` frames that reached the recipient inside the measured window.
 * pg mode: one connection per pair, each doing one autocommit INSERT of the same message row at a
 *   time (named prepared statement); latency is the INSERT round trip.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { encodeHeader, resolvePhase, type LoadResult, type LoadSpec, type PhaseResult } from './common.js';
import { Phase, serveLoad, sleep } from './phase.js';
import { WsLoad } from './ws-load.js';

/** What a socket sends: its conversation and its (random, opaque) ciphertext. */
interface Out {
  conversationId: string;
  ciphertext: string;
}

async function runWs(spec: LoadSpec): Promise<LoadResult> {
  const load = new WsLoad<Out>(spec.window, {
    delivery: { event: 'message', header: 'header_blob' },
    ack: 'message_ack',
    send: (ep, at) =>
      ep.ws.send(
        JSON.stringify({
          event: 'message',
          data: {
            conversation_id: ep.out.conversationId,
            header_blob: encodeHeader(at, ep.index, ep.seq).toString('base64'),
            ciphertext: ep.out.ciphertext,
            client_ref: String(ep.seq),
          },
        }),
      ),
  });
  const out = (conversationId: string): Out => ({ conversationId, ciphertext: randomBytes(spec.ciphertextBytes).toString('base64') });
  const connectMs = await load.connect(
    spec.pairs.flatMap((p) => [
      { url: p.agent.url, out: out(p.conversationId) },
      { url: p.owner.url, out: out(p.conversationId) },
    ]),
  );

  const results: PhaseResult[] = [];
  let drained = true;
  for (const spec_ of spec.phases) {
    const ps = resolvePhase(spec_, results);
    const r = await load.runPhase(ps, load.sockets, spec.drainTimeoutMs, () => load.delivered + load.errors >= load.sent);
    drained &&= r.drained;
    results.push(r.result);
  }
  await load.close();
  return { label: spec.label, mode: 'ws', connections: load.sockets.length, ...load.totals(connectMs, drained), phases: results };
}

const INSERT =
  'insert into messages (id, tenant_id, conversation_id, group_id, topic_id, sender_device_id, recipient_device_id, ' +
  'header_blob, ciphertext, message_type, priority, created_at) values ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12)';

async function runPg(spec: LoadSpec): Promise<LoadResult> {
  const connectStart = performance.now();
  const clients = await Promise.all(
    spec.pairs.map(async () => {
      const c = new pg.Client({ connectionString: spec.databaseUrl });
      await c.connect();
      return c;
    }),
  );
  const connectMs = performance.now() - connectStart;
  const header = encodeHeader(0, 0, 0);
  const ciphertext = randomBytes(spec.ciphertextBytes);
  let sent = 0;
  let acked = 0;
  let errors = 0;
  let firstError: string | undefined;

  const writer = async (p: Phase, c: pg.Client, i: number) => {
    const pair = spec.pairs[i]!;
    const interval = p.spec.rate === undefined ? 0 : (1000 * clients.length) / p.spec.rate;
    let next = p.t0 + (interval * i) / clients.length;
    let n = 0;
    for (;;) {
      let at = performance.now();
      if (p.spec.rate !== undefined) {
        if (next > at) await sleep(next - at);
        at = next;
        next += interval;
      }
      if (!p.admit(at)) return;
      const fromAgent = n++ % 2 === 0;
      sent++;
      try {
        await c.query({
          name: 'bench_insert',
          text: INSERT,
          values: [
            randomUUID(),
            spec.tenantId,
            pair.conversationId,
            pair.groupId,
            pair.topicId,
            fromAgent ? pair.agent.deviceId : pair.owner.deviceId,
            fromAgent ? pair.owner.deviceId : pair.agent.deviceId,
            header,
            ciphertext,
            'text',
            'normal',
            new Date(),
          ],
        });
        acked++;
        p.record(at, performance.now());
      } catch (err) {
        errors++;
        firstError ??= String(err);
      }
    }
  };

  const results: PhaseResult[] = [];
  for (const spec_ of spec.phases) {
    const ps = resolvePhase(spec_, results);
    const p = new Phase(ps, performance.now());
    const stopper = setTimeout(() => p.stop(performance.now()), ps.warmupMs + ps.durationMs + 5);
    await Promise.all(clients.map((c, i) => writer(p, c, i)));
    clearTimeout(stopper);
    results.push(p.result());
  }
  await Promise.all(clients.map((c) => c.end()));
  return {
    label: spec.label,
    mode: 'pg',
    connections: clients.length,
    connectMs,
    sent,
    acked,
    delivered: acked,
    errors,
    ...(firstError ? { firstError } : {}),
    drained: true,
    phases: results,
  };
}

serveLoad<LoadSpec, LoadResult>((spec) => (spec.mode === 'ws' ? runWs(spec) : runPg(spec)));

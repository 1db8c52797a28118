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
 * ws mode: two sockets per pair (agent, owner device); both send `message` frames on their
 *   conversation. Latency runs from the send (or scheduled send) to the recipient's `message`
 *   frame: the time travels in header_blob, and both sides live in this process (one clock).
 *   Throughput counts `message` frames that reached the recipient inside the measured window.
 * pg mode: one connection per pair, each doing one autocommit INSERT of the same message row at a
 *   time (named prepared statement); latency is the INSERT round trip.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import WebSocket from 'ws';
import { encodeHeader, headerSentAt, type LoadResult, type LoadSpec, type ParentToChild, type PhaseResult } from './common.js';
import { Phase, reply, sleep } from './phase.js';

interface Endpoint {
  index: number;
  ws: WebSocket;
  conversationId: string;
  ciphertext: string;
  inflight: number;
  seq: number;
  /** Open loop: scheduled time of this socket's next message. */
  next: number;
}

async function runWs(spec: LoadSpec): Promise<LoadResult> {
  const connectStart = performance.now();
  let phase: Phase | undefined;
  let interval = 0; // open loop: ms between two messages of one socket
  let sent = 0;
  let acked = 0;
  let delivered = 0;
  let errors = 0;
  let firstError: string | undefined;
  let closing = false;
  const endpoints: Endpoint[] = [];

  const sendAt = (ep: Endpoint, at: number) => {
    ep.seq++;
    ep.inflight++;
    sent++;
    ep.ws.send(
      JSON.stringify({
        event: 'message',
        data: {
          conversation_id: ep.conversationId,
          header_blob: encodeHeader(at, ep.index, ep.seq).toString('base64'),
          ciphertext: ep.ciphertext,
          client_ref: String(ep.seq),
        },
      }),
    );
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

  const open = (index: number, url: string, conversationId: string) =>
    new Promise<Endpoint>((resolve, reject) => {
      const ws = new WebSocket(url, { perMessageDeflate: false });
      const ep: Endpoint = { index, ws, conversationId, ciphertext: randomBytes(spec.ciphertextBytes).toString('base64'), inflight: 0, seq: 0, next: 0 };
      ws.on('open', () => resolve(ep));
      ws.on('error', reject);
      ws.on('close', (code, reason) => {
        if (!closing) {
          errors++;
          firstError ??= `socket ${index} closed ${code} ${reason.toString()}`;
        }
      });
      ws.on('message', (raw) => {
        const now = performance.now();
        const frame = JSON.parse(raw.toString()) as { event: string; data: Record<string, unknown> };
        switch (frame.event) {
          case 'message':
            delivered++;
            phase?.record(headerSentAt(frame.data.header_blob as string), now);
            return;
          case 'message_ack':
            acked++;
            ep.inflight--;
            return pump(ep);
          case 'error':
            errors++;
            firstError ??= JSON.stringify(frame.data);
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

  let i = 0;
  for (const p of spec.pairs) {
    endpoints.push(await open(i++, p.agent.url, p.conversationId));
    endpoints.push(await open(i++, p.owner.url, p.conversationId));
  }
  // Parley authenticates after the upgrade; give it a moment so the first frames are not queued.
  await sleep(300);
  const connectMs = performance.now() - connectStart;

  const results: PhaseResult[] = [];
  let drained = true;
  for (const ps of spec.phases) {
    const p = new Phase(ps, performance.now());
    phase = p;
    let ticker: NodeJS.Timeout | undefined;
    if (ps.rate !== undefined) {
      interval = (1000 * endpoints.length) / ps.rate;
      // Spread the sockets evenly over one interval so the offered load is smooth.
      endpoints.forEach((ep, k) => (ep.next = p.t0 + (interval * k) / endpoints.length));
      ticker = setInterval(() => {
        for (const ep of endpoints) pump(ep);
      }, 1);
    }
    const stopper = setTimeout(() => p.stop(performance.now()), ps.warmupMs + ps.durationMs + 5);
    for (const ep of endpoints) pump(ep);
    while (p.running) await sleep(20);
    clearTimeout(stopper);
    if (ticker) clearInterval(ticker);

    const drainUntil = performance.now() + spec.drainTimeoutMs;
    let ok = false;
    while (performance.now() < drainUntil) {
      if (endpoints.every((ep) => ep.inflight === 0) && delivered + errors >= sent) {
        ok = true;
        break;
      }
      await sleep(10);
    }
    drained &&= ok;
    results.push(p.result());
    phase = undefined;
  }
  closing = true;
  for (const ep of endpoints) ep.ws.close(1000);
  await sleep(50);

  return {
    label: spec.label,
    mode: 'ws',
    connections: endpoints.length,
    connectMs,
    sent,
    acked,
    delivered,
    errors,
    ...(firstError ? { firstError } : {}),
    drained,
    phases: results,
  };
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
  for (const ps of spec.phases) {
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

// The parent died (e.g. interrupted): stop instead of loading a server that is gone.
process.on('disconnect', () => process.exit(1));
process.once('message', (msg: ParentToChild) => {
  const run = msg.spec.mode === 'ws' ? runWs : runPg;
  run(msg.spec).then(
    async (result) => {
      await reply({ type: 'result', result });
      process.exit(0);
    },
    async (err: unknown) => {
      await reply({ type: 'failed', error: err instanceof Error ? (err.stack ?? err.message) : String(err) });
      process.exit(1);
    },
  );
});

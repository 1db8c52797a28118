/**
 * The recovery scenario of the cluster benchmark (run.ts): N pairs connected through the load
 * balancer, every owner-device socket sending to its agent at a steady rate; one instance is
 * killed with SIGKILL; every socket it held reconnects through the load balancer (retrying every
 * `retryMs`), and every agent that lost its socket catches up by cursor
 * (`GET /devices/{id}/messages?conversation_id=…&since=<cursor>`, paged until an empty page), as a
 * client does, with the SDK's resume rule (packages/sdk/src/realtime/client.ts): from the newest
 * cursor received live at least `reorderWindowMs` before the drop (with several instances live
 * messages arrive slightly out of cursor order), or where its last catch-up ended if newer — never
 * from a cursor received on the new socket, which can be newer than messages it missed — 50 ms
 * after the new socket opened (the server authenticates after the upgrade; a message committed
 * before the socket is registered is not pushed to it).
 *
 * Measured from the kill: when the last dropped socket is open again (`reconnectedMs`) and when
 * every message acknowledged to its sender before that moment has reached its recipient, live or
 * by the history fetch (`caughtUpMs`). Messages acknowledged but never received within
 * `deadlineMs` are reported as `lost` (0 expected: an acknowledgement means the message was
 * committed). Runs in the orchestrator process: the servers are other processes, and the load is
 * small (`ratePerPair` messages/s per pair).
 */
import { randomBytes } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import WebSocket from 'ws';
import { encodeHeader, headerSeq, type Pair } from '../relay/common.js';
import { sleep, waitFor } from '../relay/phase.js';

/** What the scenario needs to know of the cluster and its pairs. */
export interface RecoverySpec {
  /** The load balancer, `http://host:port`. */
  lbUrl: string;
  pairs: Pair[];
  /** Device JWT of each pair's agent (same order as `pairs`). */
  agentJwts: string[];
  /** Owner JWT (the owner devices connect with it and `device_id`). */
  ownerToken: string;
  /** The instances by name (`i1`, `i2`, … as in `X-Parley-Instance`). */
  instances: { name: string; process: ChildProcess }[];
  /** The instance to kill. */
  victim: string;
  /** Messages per second each owner device sends to its agent. */
  ratePerPair: number;
  /** How long traffic runs before the kill, and keeps running after it, in ms. */
  beforeMs: number;
  /** Give up waiting for reconnection and catch-up after this many ms. */
  deadlineMs: number;
  /** Pause between two connection attempts of a dropped socket, in ms. */
  retryMs: number;
  /** How late a live message may arrive after one with a higher cursor (the SDK's default: 2000 ms). */
  reorderWindowMs: number;
}

export interface RecoveryResult {
  sockets: number;
  /** Sockets per instance at the kill. */
  placement: Record<string, number>;
  /** Sockets the kill closed (agents, owner devices). */
  dropped: { agents: number; owners: number };
  /** From the kill until the last dropped socket was open again (ms); NaN if some never reconnected. */
  reconnectedMs: number;
  /** Median over dropped sockets of the time until reopened (ms). */
  reconnectP50Ms: number;
  /** From the kill until every message acknowledged before `reconnectedMs` was received (ms); NaN if never. */
  caughtUpMs: number;
  /** Messages the history fetches returned that the socket had not received live. */
  fetchedFromHistory: number;
  sent: number;
  acked: number;
  /** Sent, never acknowledged (in flight on the killed instance, or refused). */
  unacked: number;
  /** Acknowledged, never received by the deadline. */
  lost: number;
  /** Up to five lost messages: pair, seq, when acknowledged and when its agent's socket reopened (ms after the kill; null if it never dropped). */
  lostSamples: { pair: number; seq: number; cursor: string | undefined; ackedMs: number; agentReopenedMs: number | null }[];
  /** Error frames and failed history fetches. */
  errors: number;
  firstError?: string;
}

interface Sock {
  role: 'agent' | 'owner';
  pair: number;
  url: string;
  ws: WebSocket | undefined;
  instance: string | undefined;
  open: boolean;
  droppedAt?: number;
  reopenedAt?: number;
  /** Agents: where the catch-up starts ({@link RecoverySpec.reorderWindowMs}; live messages after the drop do not move it). */
  resumeFrom?: string;
  /** Agents: a drop not yet followed by a completed catch-up. */
  behind?: boolean;
}

/** Run the scenario (see the file comment); closes its sockets before answering. */
export async function runRecovery(spec: RecoverySpec): Promise<RecoveryResult> {
  const ws = spec.lbUrl.replace(/^http/, 'ws') + '/api/v1/ws';
  const n = spec.pairs.length;
  const ciphertext = randomBytes(200).toString('base64');
  let closing = false;
  let killedAt = Infinity;
  let errors = 0;
  let firstError: string | undefined;
  const fail = (what: string) => {
    errors++;
    firstError ??= what;
  };
  // Per pair: seqs sent, acknowledged (with the time), received by the agent; the agent's last cursor.
  const sent = Array.from({ length: n }, () => 0);
  const ackedAt = Array.from({ length: n }, () => new Map<number, number>());
  const received = Array.from({ length: n }, () => new Set<number>());
  // Per agent: cursors received live (with the time) and where its last catch-up ended.
  const live = Array.from({ length: n }, () => [] as { at: number; cursor: string }[]);
  const caughtUpTo: (string | undefined)[] = Array.from({ length: n }, () => undefined);
  const newer = (a: string | undefined, b: string | undefined) => (a === undefined ? b : b === undefined ? a : Number(b) > Number(a) ? b : a);
  /** The SDK's resume point: the newest live cursor settled (older than the reorder window) at `at`, or the catch-up's end if newer. */
  const resumePoint = (pair: number, at: number) => {
    let settled: string | undefined;
    for (const e of live[pair]!) if (e.at <= at - spec.reorderWindowMs) settled = newer(settled, e.cursor);
    return newer(settled, caughtUpTo[pair]);
  };
  const ackCursor = Array.from({ length: n }, () => new Map<number, string>());
  let fetchedFromHistory = 0;

  const agentSock = (i: number): Sock => ({ role: 'agent', pair: i, url: `${ws}?token=${spec.agentJwts[i]}`, ws: undefined, instance: undefined, open: false });
  const ownerSock = (i: number): Sock => ({ role: 'owner', pair: i, url: `${ws}?token=${spec.ownerToken}&device_id=${spec.pairs[i]!.owner.deviceId}`, ws: undefined, instance: undefined, open: false });
  // Agents first, then owner devices in reverse order: under round robin each pair spans both instances.
  const sockets = [...spec.pairs.map((_, i) => agentSock(i)), ...spec.pairs.map((_, i) => ownerSock(n - 1 - i))];

  /** Catch an agent up by cursor after it reconnected (every page, until `next_cursor` is null). */
  const catchUp = async (s: Sock) => {
    const pair = spec.pairs[s.pair]!;
    let since = s.resumeFrom;
    for (;;) {
      const q = new URLSearchParams({ conversation_id: pair.conversationId, limit: '200', ...(since ? { since } : {}) });
      const res = await fetch(`${spec.lbUrl}/api/v1/devices/${pair.agent.deviceId}/messages?${q.toString()}`, { headers: { authorization: `Bearer ${spec.agentJwts[s.pair]}` } });
      if (!res.ok) {
        fail(`history ${res.status} ${await res.text()}`);
        return;
      }
      const page = (await res.json()) as { messages: { header_blob: string; sender_device_id: string; cursor: string }[]; next_cursor: string | null };
      for (const m of page.messages) {
        if (m.sender_device_id !== pair.owner.deviceId) continue;
        const { seq } = headerSeq(m.header_blob);
        if (!received[s.pair]!.has(seq)) {
          received[s.pair]!.add(seq);
          fetchedFromHistory++;
        }
      }
      if (!page.next_cursor || page.messages.length === 0) {
        caughtUpTo[s.pair] = newer(caughtUpTo[s.pair], since);
        s.behind = false;
        return;
      }
      since = page.next_cursor;
    }
  };

  const connect = (s: Sock): Promise<void> =>
    new Promise((resolve, reject) => {
      const sock = new WebSocket(s.url, { perMessageDeflate: false });
      s.ws = sock;
      sock.on('upgrade', (res) => (s.instance = String(res.headers['x-parley-instance'] ?? '?')));
      sock.on('open', () => {
        s.open = true;
        resolve();
      });
      sock.on('error', (err) => reject(err));
      sock.on('close', () => {
        const was = s.open;
        s.open = false;
        if (closing || !was) return;
        s.droppedAt ??= performance.now();
        if (s.role === 'agent' && !s.behind) {
          s.behind = true;
          s.resumeFrom = resumePoint(s.pair, performance.now());
        }
        void reconnect(s);
      });
      sock.on('message', (raw) => {
        const frame = JSON.parse(raw.toString()) as { event: string; data: Record<string, unknown> };
        if (frame.event === 'ping') sock.send('{"event":"pong","data":{}}');
        else if (frame.event === 'message' && s.role === 'agent') {
          received[s.pair]!.add(headerSeq(frame.data.header_blob as string).seq);
          const at = performance.now();
          const list = live[s.pair]!;
          list.push({ at, cursor: frame.data.cursor as string });
          while (list.length > 0 && list[0]!.at < at - 10 * spec.reorderWindowMs) list.shift();
        } else if (frame.event === 'message_ack' && s.role === 'owner') ackedAt[s.pair]!.set(Number(frame.data.client_ref), performance.now());
        else if (frame.event === 'error') fail(JSON.stringify(frame.data));
      });
    });

  const reconnect = async (s: Sock) => {
    while (!closing) {
      try {
        await connect(s);
        s.reopenedAt ??= performance.now();
        // Wait for the server to authenticate before asking for history (it authenticates after the upgrade).
        if (s.role === 'agent') await sleep(50).then(() => catchUp(s));
        return;
      } catch {
        await sleep(spec.retryMs);
      }
    }
  };

  for (const s of sockets) await connect(s);
  await sleep(300);
  const placement: Record<string, number> = {};
  for (const s of sockets) placement[s.instance ?? '?'] = (placement[s.instance ?? '?'] ?? 0) + 1;

  // Steady traffic: each owner device sends every 1000/ratePerPair ms (staggered), while its socket is open.
  const interval = 1000 / spec.ratePerPair;
  const owners = sockets.filter((s) => s.role === 'owner');
  const timers = owners.map((s, k) =>
    setTimeout(() => {
      const tick = () => {
        if (closing || !s.open) return;
        const seq = ++sent[s.pair]!;
        s.ws!.send(
          JSON.stringify({
            event: 'message',
            data: { conversation_id: spec.pairs[s.pair]!.conversationId, header_blob: encodeHeader(performance.now(), s.pair, seq).toString('base64'), ciphertext, client_ref: String(seq) },
          }),
        );
      };
      tick();
      timers.push(setInterval(tick, interval) as unknown as NodeJS.Timeout);
    }, (interval * k) / owners.length),
  );

  await sleep(spec.beforeMs);
  const victim = spec.instances.find((i) => i.name === spec.victim);
  if (!victim) throw new Error(`no instance ${spec.victim}`);
  const onVictim = sockets.filter((s) => s.instance === spec.victim);
  killedAt = performance.now();
  victim.process.kill('SIGKILL');

  const allReopened = () => onVictim.every((s) => s.reopenedAt !== undefined);
  await waitFor(allReopened, spec.deadlineMs);
  const reconnectedAt = allReopened() ? Math.max(...onVictim.map((s) => s.reopenedAt!)) : NaN;
  // Caught up: every message acknowledged before the last socket came back has been received.
  const cutoff = Number.isNaN(reconnectedAt) ? performance.now() : reconnectedAt;
  const pending = () => {
    let missing = 0;
    for (let i = 0; i < n; i++) for (const [seq, at] of ackedAt[i]!) if (at <= cutoff && !received[i]!.has(seq)) missing++;
    return missing;
  };
  const caught = await waitFor(() => pending() === 0, Math.max(0, spec.deadlineMs - (performance.now() - killedAt)));
  const caughtUpMs = caught ? performance.now() - killedAt : NaN;
  // Keep the traffic running a little after recovery (the scenario asks for load during and after).
  await sleep(Math.min(1000, spec.beforeMs));
  closing = true;
  for (const t of timers) clearInterval(t);
  await sleep(500); // let the last acknowledgements and deliveries arrive
  let acked = 0;
  let lost = 0;
  let unacked = 0;
  const lostSamples: RecoveryResult['lostSamples'] = [];
  for (let i = 0; i < n; i++) {
    acked += ackedAt[i]!.size;
    unacked += sent[i]! - ackedAt[i]!.size;
    const agent = sockets.find((s) => s.role === 'agent' && s.pair === i)!;
    for (const [seq, at] of ackedAt[i]!) {
      if (received[i]!.has(seq)) continue;
      lost++;
      if (lostSamples.length < 5) lostSamples.push({ pair: i, seq, cursor: ackCursor[i]!.get(seq), ackedMs: Math.round(at - killedAt), agentReopenedMs: agent.reopenedAt === undefined ? null : Math.round(agent.reopenedAt - killedAt) });
    }
  }
  for (const s of sockets) s.ws?.close(1000);
  const reopen = onVictim
    .map((s) => (s.reopenedAt ?? NaN) - killedAt)
    .filter(Number.isFinite)
    .sort((a, b) => a - b);
  return {
    sockets: sockets.length,
    placement,
    dropped: { agents: onVictim.filter((s) => s.role === 'agent').length, owners: onVictim.filter((s) => s.role === 'owner').length },
    reconnectedMs: reconnectedAt - killedAt,
    reconnectP50Ms: reopen.length ? reopen[Math.floor((reopen.length - 1) / 2)]! : NaN,
    caughtUpMs,
    fetchedFromHistory,
    sent: sent.reduce((a, b) => a + b, 0),
    acked,
    unacked,
    lost,
    lostSamples,
    errors,
    ...(firstError ? { firstError } : {}),
  };
}

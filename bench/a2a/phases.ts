/**
 * Where the time of one A2A call through two plugins goes (bench/a2a, `--phase-samples`): the
 * bench wraps, on the running instances of x and y (not in the SDK's code), the points one
 * `SendMessage` passes, and times each against the client's call:
 *
 *   {side}.sendPlaintext      the channel layer is asked to send a frame (x: the plugin has read the
 *                             HTTP request, checked the card and found the channel open)
 *   {side}.seal / seal done   the MLS encryption of the frame and the state write before it leaves
 *   {side}.post / post done   `POST /api/v1/a2a/channels/{id}/messages` with the ciphertext
 *   {side}.socket             the peer's message arrives on this side's socket
 *   {side}.decrypted          the channel layer hands the decrypted frame to its listeners
 *   upstream.in / out         the official server got the request / finished writing its answer
 *
 * Also per call: the state-store writes of each side (count and time; from this call's start to
 * the next one's, so writes after the answer count too), the SQL statements and transactions the
 * service sent, and the CPU time of this process (which runs the service, both agents, the
 * upstream and the client).
 */
import fs from 'node:fs';
import { Session } from 'node:inspector/promises';
import type { Client } from '@a2a-js/sdk/client';
import type { PluginAgent } from '../plugin-agents.js';
import { fmt, printTable } from '../relay/report.js';
import { countSql } from '../relay/sql-count.js';
import { sendChecked } from './official.js';

/** What {@link profilePhases} needs: the two agents, the client of x's plugin for y, and a hook on the upstream's request log. */
export interface PhaseOptions {
  x: PluginAgent;
  y: PluginAgent;
  client: Client;
  samples: number;
  /** Install the function the upstream calls when a request arrives (`in`) and its answer is written (`out`). */
  upstreamSeen(f: (what: 'in' | 'out') => void): void;
  /** Write a V8 CPU profile of this process over the timed calls to this file (`.cpuprofile`, Chrome DevTools format). */
  cpuProfile?: string;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? NaN;
};

type Fn = (...args: unknown[]) => unknown;

/**
 * Replace `obj[name]` (an instance's own property from then on) by `wrap(original)`.
 * @throws Error naming the method when `obj` has none by that name (the SDK's internals changed).
 */
function wrapMethod(obj: object | undefined, name: string, wrap: (original: Fn) => Fn): void {
  const o = obj as Record<string, Fn> | undefined;
  if (typeof o?.[name] !== 'function') throw new Error(`bench/a2a phases: no method ${name} to time (the SDK's internals changed; update bench/a2a/phases.ts)`);
  const original = o[name].bind(obj) as Fn;
  o[name] = wrap(original);
}

/** Time `samples` sequential `SendMessage` calls by phase and print the medians (see the file comment). */
export async function profilePhases(o: PhaseOptions): Promise<void> {
  let t0 = 0;
  let marks: Map<string, number> | undefined;
  const mark = (name: string) => {
    if (marks && !marks.has(name)) marks.set(name, performance.now() - t0);
  };
  type Writes = { n: number; ms: number; keys: Record<string, { n: number; ms: number; bytes: number }> };
  const noWrites = (): Record<'x' | 'y', Writes> => ({ x: { n: 0, ms: 0, keys: {} }, y: { n: 0, ms: 0, keys: {} } });
  let writes = noWrites();

  for (const [side, agent] of [
    ['x', o.x],
    ['y', o.y],
  ] as const) {
    const channels = agent.rt.channels as unknown as { messenger: object; client: object };
    const timedCall = (point: string) => (original: Fn) => async (...args: unknown[]) => {
      mark(`${side}.${point}`);
      try {
        return await original(...args);
      } finally {
        mark(`${side}.${point} done`);
      }
    };
    wrapMethod(channels, 'sendPlaintext', (original) => (...args) => {
      mark(`${side}.sendPlaintext`);
      return original(...args);
    });
    wrapMethod(channels.messenger, 'seal', timedCall('seal'));
    wrapMethod(channels.client, 'sendA2aMessage', timedCall('post'));
    agent.rt.realtime.on('event', (e) => {
      if (e.event === 'a2a_message' && (e.data as { sender_device_id?: string }).sender_device_id !== agent.rt.deviceId) mark(`${side}.socket`);
    });
    agent.rt.channels.on('message', () => mark(`${side}.decrypted`));
    if (agent.rt.store) {
      wrapMethod(agent.rt.store, 'save', (original) => async (...args) => {
        const start = performance.now();
        try {
          return await original(...args);
        } finally {
          const ms = performance.now() - start;
          const key = `${side}: ${String(args[0]).replaceAll(agent.rt.deviceId, '{device}')}`;
          writes[side].n++;
          writes[side].ms += ms;
          const k = (writes[side].keys[key] ??= { n: 0, ms: 0, bytes: 0 });
          k.n++;
          k.ms += ms;
          k.bytes = String(args[1]).length;
        }
      });
    }
  }
  o.upstreamSeen((what) => mark(`upstream.${what}`));

  const sql = countSql();
  const calls: { marks: Map<string, number>; total: number; cpuMs: number; writes: typeof writes; statements: number; transactions: number }[] = [];
  let previous: (typeof calls)[number] | undefined;
  const inspector = o.cpuProfile ? new Session() : undefined;
  if (inspector) {
    inspector.connect();
    await inspector.post('Profiler.enable');
    await inspector.post('Profiler.start');
  }
  for (let i = 0; i < o.samples; i++) {
    const m = new Map<string, number>();
    const cpu = process.cpuUsage();
    const sql0 = { ...sql };
    writes = noWrites(); // the previous call's object keeps its writes until now
    if (previous) {
      // A call's statements: until the next call starts.
      previous.statements = sql.statements - previous.statements;
      previous.transactions = sql.transactions - previous.transactions;
    }
    t0 = performance.now();
    marks = m;
    await sendChecked(o.client, `phase ${i}`);
    const total = performance.now() - t0;
    const used = process.cpuUsage(cpu);
    previous = { marks: m, total, cpuMs: (used.user + used.system) / 1000, writes, statements: sql0.statements, transactions: sql0.transactions };
    calls.push(previous);
  }
  marks = undefined;
  if (inspector) {
    const { profile } = await inspector.post('Profiler.stop');
    fs.writeFileSync(o.cpuProfile!, JSON.stringify(profile));
    inspector.disconnect();
    console.log(`# CPU profile of the timed calls: ${o.cpuProfile}`);
  }
  // The writes of the last call are complete once the next would start; it is left out of the write figures.
  const withWrites = calls.slice(0, -1);

  // The call's path, point after point; each POST's answer is timed from the POST (the relay to the peer overlaps it).
  const path = ['x.sendPlaintext', 'x.seal', 'x.seal done', 'x.post', 'y.socket', 'y.decrypted', 'upstream.in', 'upstream.out', 'y.sendPlaintext', 'y.seal', 'y.seal done', 'y.post', 'x.socket', 'x.decrypted'];
  const side: Record<string, string> = { 'x.post done': 'x.post', 'y.post done': 'y.post' };
  const at = (c: (typeof calls)[number], n: string) => (n === 'client call' ? 0 : n === 'client answer' ? c.total : c.marks.get(n));
  const row = (n: string, from: string) => {
    const since = median(calls.flatMap((c) => (at(c, n) === undefined ? [] : [at(c, n)!])));
    const step = median(calls.flatMap((c) => (at(c, n) === undefined || at(c, from) === undefined ? [] : [at(c, n)! - at(c, from)!])));
    return [n, fmt(since, 2), `${fmt(step, 2)} (from ${from})`];
  };
  const rows: string[][] = [];
  let before = 'client call';
  for (const n of [...path, 'client answer']) {
    rows.push(row(n, before));
    for (const [s, from] of Object.entries(side)) if (from === n) rows.push(row(s, from));
    before = n;
  }
  console.log(`\n## bench/a2a phases — ${o.samples} SendMessage calls through both plugins (medians; not part of the figures above)\n`);
  console.log(printTable(['point', 'ms since the call', 'step ms'], rows));
  const w = (side: 'x' | 'y') => `${side}: ${fmt(median(withWrites.map((c) => c.writes[side].n)), 0)} writes, ${fmt(median(withWrites.map((c) => c.writes[side].ms)), 2)} ms`;
  console.log(`\nstate-store writes per call (median): ${w('x')}; ${w('y')}`);
  const keys = [...new Set(withWrites.flatMap((c) => [...Object.keys(c.writes.x.keys), ...Object.keys(c.writes.y.keys)]))].sort();
  const keyRows = keys.map((k) => {
    const of = (c: (typeof calls)[number]) => c.writes[k.startsWith('x') ? 'x' : 'y'].keys[k];
    return [k, fmt(median(withWrites.map((c) => of(c)?.n ?? 0)), 0), fmt(median(withWrites.map((c) => of(c)?.ms ?? 0)), 2), fmt(median(withWrites.flatMap((c) => (of(c) ? [of(c)!.bytes] : []))) / 1024, 1)];
  });
  console.log(printTable(['state key', 'writes / call', 'ms / call', 'KiB each'], keyRows));
  console.log(`SQL per call (median): ${fmt(median(withWrites.map((c) => c.statements)), 0)} statements in ${fmt(median(withWrites.map((c) => c.transactions)), 0)} transactions`);
  console.log(`CPU time of this process per call (median): ${fmt(median(calls.map((c) => c.cpuMs)), 2)} ms over ${fmt(median(calls.map((c) => c.total)), 2)} ms wall`);
}

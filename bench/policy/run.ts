/**
 * bench/policy: policy evaluations per second (design §8.5), measured next to baselines
 * in the same run (design §9):
 *
 *   floor      the evaluation loop with an empty policy set (context in, default out): the baseline;
 *   p1         one policy (message_types + sender_kinds);
 *   p100       100 enabled policies mixing every condition key (lists of ids, hub addresses, hours,
 *              tiers, rates, cross-tenant, room scopes), about 10% of them matching: the target;
 *   p100-all   100 policies that all match (every predicate runs to the end: the worst case).
 *
 * One evaluation = one (message, recipient) pair against the compiled set, all matches collected,
 * the most restrictive action chosen. Pure CPU in this process; compilation is done once (as the
 * service does per decide() call, which loads and compiles the tenant's set once per message).
 * Each scenario runs `--rounds` interleaved rounds of `--duration` ms after a warm-up round; the
 * table shows the median evaluations/s and the ratio to `floor`.
 *
 *   npm run bench:policy -- [--duration 500] [--rounds 5]
 */
import os from 'node:os';
import { parseArgs } from 'node:util';
import { randomUUID } from 'node:crypto';
import { FormatRegistry } from '@sinclair/typebox';
import { compilePolicies, evaluate, POLICY_ACTIONS, type EvaluationContext, type PolicyRule } from '../../packages/server/src/modules/policies/engine.js';
import { measure, median, rate } from '../crypto/measure.js';

if (!FormatRegistry.Has('uuid')) FormatRegistry.Set('uuid', () => true);

const { values: argv } = parseArgs({ options: { duration: { type: 'string' }, rounds: { type: 'string' } } });
const durationMs = Number(argv.duration ?? process.env.BENCH_DURATION_MS ?? 500);
const rounds = Number(argv.rounds ?? process.env.BENCH_ROUNDS ?? 5);

const rooms = Array.from({ length: 10 }, () => randomUUID());
const devices = Array.from({ length: 200 }, () => randomUUID());
const types = ['text', 'decision_request', 'status_alert', 'artifact', 'attachment'];
const pick = <T>(xs: readonly T[], i: number) => xs[i % xs.length]!;

/** 100 policies: every condition key used, ~10% match the sample contexts. */
function mixed(n: number): PolicyRule[] {
  return Array.from({ length: n }, (_, i): PolicyRule => {
    const c: PolicyRule['conditions'] = {};
    switch (i % 8) {
      case 0: c.message_types = [pick(types, i), pick(types, i + 1)]; c.sender_kinds = ['agent']; break;
      case 1: c.sender_device_ids = devices.slice(i, i + 20); break;
      case 2: c.recipient_device_ids = devices.slice(i, i + 5); c.priorities = ['urgent']; break;
      case 3: c.sender_hub_addresses = [`agent-${i}`, `agent-${i + 1}`]; break;
      case 4: c.sender_tier_below = 'certified'; c.message_types = ['artifact']; break;
      case 5: c.hours_utc = { from: (i % 24), to: ((i + 3) % 24) }; c.recipient_kinds = ['owner']; break;
      case 6: c.rate_per_minute_over = 100 + i; break;
      default: c.cross_tenant = true; c.priorities = ['high', 'urgent']; break;
    }
    return { id: randomUUID(), action: pick(POLICY_ACTIONS, i), conditions: c, scopeRoomId: i % 3 === 0 ? pick(rooms, i) : null, scopeSkill: null, enabled: true };
  });
}

const everything = (n: number): PolicyRule[] =>
  Array.from({ length: n }, (_, i) => ({
    id: randomUUID(),
    action: pick(POLICY_ACTIONS, i),
    conditions: { message_types: types, sender_kinds: ['agent', 'owner'], priorities: ['low', 'normal', 'high', 'urgent'], hours_utc: { from: 0, to: 0 }, cross_tenant: false },
    scopeRoomId: null,
    scopeSkill: null,
    enabled: true,
  }));

const contexts: EvaluationContext[] = Array.from({ length: 64 }, (_, i) => ({
  roomId: pick(rooms, i),
  messageType: pick(types, i),
  priority: pick(['low', 'normal', 'high', 'urgent'], i),
  senderKind: i % 2 ? 'agent' : 'owner',
  recipientKind: i % 3 ? 'agent' : 'owner',
  senderDeviceId: pick(devices, i * 7),
  recipientDeviceId: pick(devices, i * 11),
  senderHubAddress: `agent-${i}`,
  senderTier: pick(['unverified', 'certified', 'enterprise'] as const, i),
  crossTenant: i % 5 === 0,
  now: new Date(Date.UTC(2026, 0, 1, i % 24)),
  senderRatePerMinute: i * 3,
}));

const scenarios = {
  floor: compilePolicies([]),
  p1: compilePolicies([{ id: randomUUID(), action: 'hold', conditions: { message_types: ['artifact'], sender_kinds: ['agent'] }, scopeRoomId: null, scopeSkill: null, enabled: true }]),
  p100: compilePolicies(mixed(100)),
  'p100-all': compilePolicies(everything(100)),
};

let k = 0;
let sink = 0;
const step = (set: (typeof scenarios)[keyof typeof scenarios]) => () => {
  const e = evaluate(set, contexts[k++ & 63]!);
  sink += e.matched.length;
};

const results: Record<string, number[]> = {};
for (let r = -1; r < rounds; r++) {
  for (const [name, set] of Object.entries(scenarios)) {
    const s = await measure(step(set), r < 0 ? durationMs / 2 : durationMs);
    if (r >= 0) (results[name] ??= []).push(rate(s));
  }
}
const floor = median(results.floor!);
console.log(`bench/policy — ${os.cpus().length} CPUs, ${os.cpus()[0]?.model ?? ''}, Node ${process.version}; ${rounds} rounds × ${durationMs} ms`);
console.log('scenario    evaluations/s   ratio to floor   µs/evaluation');
for (const [name, xs] of Object.entries(results)) {
  const m = median(xs);
  console.log(`${name.padEnd(10)} ${Math.round(m).toLocaleString('en-US').padStart(14)} ${(m / floor).toFixed(3).padStart(16)} ${(1e6 / m).toFixed(2).padStart(15)}`);
}
if (sink < 0) console.log(sink);

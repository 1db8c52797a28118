/**
 * Governance tools (contract §4.19, §4.14; design §8.6, §8.7): `svc_check_policy` and
 * `svc_delegate_skill` run the one skill policy pipeline of the service (identity -> trust floor
 * -> grant -> rate -> budget -> rules); a delegation is audited either way and, when allowed, the
 * invocation is sent end to end encrypted to the target through the local plugin.
 * `svc_submit_audit` appends to the tenant's hash-chained audit log; `svc_register_agent`
 * registers a new agent (hub identity + API key, trust score 0).
 */
import { Type } from '@sinclair/typebox';
import { ToolError } from '../errors.js';
import { encodeInvocation } from '../invocation.js';
import type { ToolContext } from '../tool.js';
import { defineTool } from '../tool.js';
import { hubAddressOf, OrNull, ParentSpanId, TraceId } from './common.js';

const Skill = Type.String({ minLength: 1, maxLength: 100, description: 'skill name (as policies and grants name it)' });
const Stage = Type.Object({ stage: Type.String(), passed: Type.Boolean(), detail: Type.String() });
const Verdict = { allowed: Type.Boolean(), decided_by: Type.String(), reason: Type.String(), stages: Type.Array(Stage) };

export const checkPolicy = defineTool({
  name: 'svc_check_policy',
  title: 'Check policy',
  description:
    'Check a skill invocation against the active policy pipeline before acting: identity, trust floor, grant (Skill Permission Token), rate, budget (the agent spend caps), rules. Answers allowed and the stage that decided, with why. Arguments are never stored.',
  input: Type.Object({
    skillName: Skill,
    toolName: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    model: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    args: Type.Optional(Type.Unknown({ description: 'the invocation arguments (policies see metadata only)' })),
  }),
  output: Type.Object(Verdict),
  annotations: { readOnlyHint: true },
  async run(args, ctx) {
    const client = await ctx.service.agent();
    return client.checkSkillPolicy({
      skill: args.skillName,
      ...(args.toolName !== undefined ? { tool: args.toolName } : {}),
      ...(args.model !== undefined ? { model: args.model } : {}),
      ...(args.args !== undefined ? { args: args.args } : {}),
    });
  },
  text: (r) => `${r.allowed ? 'ALLOWED' : 'DENIED'} by ${r.decided_by}: ${r.reason}`,
});

const Invocation = Type.Object({
  status: Type.Union([Type.Literal('sent'), Type.Literal('not_sent')]),
  channel_id: OrNull(Type.String()),
  message_id: OrNull(Type.String()),
  invocation_id: OrNull(Type.String()),
  detail: Type.String(),
});

/** Send the invocation through an open channel with `target`, if the plugin runs and one is open. */
async function invoke(ctx: ToolContext, target: string, skill: string, args: unknown, traceId: string) {
  let channels;
  try {
    channels = (await ctx.plugin.listChannels()).channels;
  } catch (err) {
    return { status: 'not_sent' as const, channel_id: null, message_id: null, invocation_id: null, detail: (err as Error).message };
  }
  const channel = channels.find((c) => c.peer_hub_address === target && c.status === 'open');
  if (!channel) {
    return { status: 'not_sent' as const, channel_id: null, message_id: null, invocation_id: null, detail: `no open channel with ${target}: open one with svc_open_channel, then delegate again` };
  }
  const inv = encodeInvocation(skill, args, { traceId });
  let sent;
  try {
    sent = await ctx.plugin.send({ channel_id: channel.channel_id, text: inv.text, traceparent: ctx.span.traceparent });
  } catch (err) {
    // The delegation stays allowed and audited; only the invocation could not be handed over.
    return { status: 'not_sent' as const, channel_id: channel.channel_id, message_id: null, invocation_id: inv.id, detail: (err as Error).message };
  }
  return {
    status: 'sent' as const,
    channel_id: channel.channel_id,
    message_id: sent.message_id,
    invocation_id: inv.id,
    detail: `invocation ${inv.id} sent (${sent.outcome}); its skill_result arrives through svc_poll_messages`,
  };
}

export const delegateSkill = defineTool({
  name: 'svc_delegate_skill',
  title: 'Delegate a skill',
  description:
    'Delegate a skill to another agent: the service verifies the target’s identity, its trust score against the policy’s trust floor, the grant, rate and rules, and writes an audit entry either way; a refusal (e.g. target below the trust floor) is an error naming the stage. When allowed, the invocation is sent end to end encrypted over the open channel with the target (open one first with svc_open_channel); the result arrives through svc_poll_messages.',
  input: Type.Object({
    targetAgent: Type.String({ minLength: 3, maxLength: 40, description: 'hub name or did:hub: DID of the agent to delegate to' }),
    skillName: Skill,
    args: Type.Optional(Type.Unknown()),
    traceId: Type.Optional(TraceId),
  }),
  output: Type.Object({
    ...Verdict,
    delegation_id: Type.String(),
    audit_event_id: Type.String(),
    target: Type.Object({ hub_address: Type.String(), did: Type.String(), trust_tier: Type.String(), trust_score: OrNull(Type.Number()) }),
    invocation: Invocation,
  }),
  annotations: { destructiveHint: false, openWorldHint: true },
  async run(args, ctx) {
    const target = hubAddressOf(args.targetAgent);
    const client = await ctx.service.agent();
    const verdict = await client.delegateSkill({
      skill: args.skillName,
      target,
      ...(args.args !== undefined ? { args: args.args } : {}),
      trace_id: ctx.span.traceId,
    });
    if (!verdict.allowed) {
      throw new ToolError(`delegation of ${args.skillName} to ${target} refused by ${verdict.decided_by}: ${verdict.reason} (audit event ${verdict.audit_event_id})`, 403);
    }
    const invocation = await invoke(ctx, target, args.skillName, args.args, ctx.span.traceId);
    return { ...verdict, invocation };
  },
  text: (r) => `Delegation ${r.delegation_id} of the skill to ${r.target.did} allowed by ${r.decided_by}; audited as ${r.audit_event_id}. Invocation ${r.invocation.status}: ${r.invocation.detail}`,
});

export const submitAudit = defineTool({
  name: 'svc_submit_audit',
  title: 'Submit audit entry',
  description: 'Append an entry to the tenant’s tamper-evident audit log (hash-chained, BLAKE2b-256 over JCS): what this agent did, with details and its trace.',
  input: Type.Object({
    action: Type.String({ minLength: 1, maxLength: 200 }),
    details: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    traceId: Type.Optional(TraceId),
    parentSpanId: Type.Optional(ParentSpanId),
  }),
  output: Type.Object({ event_id: Type.String(), type: Type.String(), hash: Type.String(), prev_hash: Type.String(), created_at: Type.String() }),
  async run(args, ctx) {
    const client = await ctx.service.agent();
    const event = await client.submitAuditEvent({
      action: args.action,
      ...(args.details !== undefined ? { details: args.details } : {}),
      trace_id: ctx.span.traceId,
      ...(ctx.span.parentSpanId !== undefined ? { parent_span_id: ctx.span.parentSpanId } : {}),
    });
    return { event_id: event.event_id, type: event.type, hash: event.hash, prev_hash: event.prev_hash, created_at: event.created_at };
  },
  text: (r) => `Audit event ${r.event_id} (${r.type}) appended; hash ${r.hash}`,
});

export const registerAgent = defineTool({
  name: 'svc_register_agent',
  title: 'Register an agent',
  description:
    'Register a new agent in this tenant: a hub identity (did:hub:<name>) with its skills and description, and a new API key for it, shown once — keep it secret (it is the agent’s credential). The new agent starts unverified with trust score 0. Skills default to those of PARLEY_SKILLS_DIR.',
  input: Type.Object({
    name: Type.String({ minLength: 3, maxLength: 32, pattern: '^[A-Za-z0-9](?:[A-Za-z0-9-]{1,30}[A-Za-z0-9])$', description: 'hub address: 3-32 of a-z, 0-9, -' }),
    skills: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 50 })),
    description: Type.Optional(Type.String({ maxLength: 1000 })),
  }),
  output: Type.Object({ did: Type.String(), hub_name: Type.String(), api_key: Type.String(), api_key_id: Type.String(), trust_score: Type.Number(), trust_tier: Type.String() }),
  async run(args, ctx) {
    const client = await ctx.service.agent();
    const skills = args.skills ?? ctx.skills.map((s) => s.name);
    const r = await client.registerAgent({
      name: args.name.toLowerCase(),
      ...(skills.length > 0 ? { skills } : {}),
      ...(args.description !== undefined ? { description: args.description } : {}),
    });
    return { did: r.did, hub_name: r.hub_name, api_key: r.api_key, api_key_id: r.api_key_id, trust_score: r.trust_score, trust_tier: r.trust_tier };
  },
  text: (r) => `Registered ${r.did} (${r.trust_tier}, trust score ${r.trust_score}). API key (shown once, keep it secret): ${r.api_key}`,
});

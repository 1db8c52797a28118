/**
 * Skill invocations between agents (contract §4.19 `svc_delegate_skill` "invokes skill", and the
 * bridge): an invocation travels end to end encrypted as the text of an A2A message, a JSON object
 * `{"parley": "skill_invocation", "id", "skill", "args", "spt"?, "trace_id"}`; the invoked agent
 * answers with `{"parley": "skill_result", "in_reply_to": <id>, "ok": bool, "result"?, "error"?}`.
 * The service sees neither (zero knowledge); the pipeline check and the audit entry happen before
 * the invocation is sent.
 */
import { randomUUID } from 'node:crypto';

/** A skill invocation (the plaintext of one A2A message). */
export interface SkillInvocation {
  parley: 'skill_invocation';
  id: string;
  skill: string;
  args: unknown;
  /** The caller's Skill Permission Token for the skill, when it holds one (a renter's rental SPT). */
  spt?: string;
  trace_id?: string;
}

/** The answer to a {@link SkillInvocation}. */
export interface SkillResult {
  parley: 'skill_result';
  in_reply_to: string;
  ok: boolean;
  result?: unknown;
  error?: string;
}

/** The text of a new invocation. */
export function encodeInvocation(skill: string, args: unknown, extra: { spt?: string; traceId?: string } = {}): { id: string; text: string } {
  const inv: SkillInvocation = {
    parley: 'skill_invocation',
    id: randomUUID(),
    skill,
    args: args ?? {},
    ...(extra.spt ? { spt: extra.spt } : {}),
    ...(extra.traceId ? { trace_id: extra.traceId } : {}),
  };
  return { id: inv.id, text: JSON.stringify(inv) };
}

/** The result in `text` answering invocation `id`, else undefined (any other message). */
export function parseResult(text: string | null, id: string): SkillResult | undefined {
  if (!text) return undefined;
  try {
    const v = JSON.parse(text) as Partial<SkillResult>;
    return v?.parley === 'skill_result' && v.in_reply_to === id && typeof v.ok === 'boolean' ? (v as SkillResult) : undefined;
  } catch {
    return undefined;
  }
}

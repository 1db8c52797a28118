/**
 * The shape of one MCP tool (contract §4.19): its name, JSON Schemas (TypeBox, so one schema gives
 * the advertised `inputSchema` / `outputSchema`, the argument check and the TypeScript types), the
 * function that runs it and a short text rendering for hosts that read text only.
 */
import type { Static, TSchema } from '@sinclair/typebox';
import type { McpConfig } from './config.js';
import type { PluginClient } from './plugin-client.js';
import type { CallClients } from './service.js';
import type { SkillFile } from './skills.js';
import type { ToolSpan } from './tracing.js';

/** What a tool run gets besides its arguments. */
export interface ToolContext {
  config: McpConfig;
  /** Service clients of this call (they send the call's `traceparent`). */
  service: CallClients;
  plugin: PluginClient;
  /** The call's span (its `traceparent` goes on A2A messages too). */
  span: ToolSpan;
  /** Skills of `PARLEY_SKILLS_DIR` (empty without one). */
  skills: readonly SkillFile[];
  /** The working directory `svc_compose_team` writes under. */
  cwd: string;
}

/** One tool. `I` / `O` are TypeBox object schemas. */
export interface ToolDef<I extends TSchema = TSchema, O extends TSchema = TSchema> {
  name: string;
  title: string;
  description: string;
  input: I;
  output: O;
  /** MCP tool annotations (hints for hosts). */
  annotations?: { readOnlyHint?: boolean; destructiveHint?: boolean; idempotentHint?: boolean; openWorldHint?: boolean };
  /** Run the tool. @throws ToolError (or a service error) for a failure the agent should read. */
  run(args: Static<I>, ctx: ToolContext): Promise<Static<O>>;
  /** One or a few lines for text-only hosts. */
  text(result: Static<O>): string;
}

/** Define a tool with its types inferred from its schemas. */
export function defineTool<I extends TSchema, O extends TSchema>(def: ToolDef<I, O>): ToolDef<I, O> {
  return def;
}

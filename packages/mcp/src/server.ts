/**
 * The MCP tool server (contract §4.19): the official SDK's low-level `Server` with the 13 tools of
 * `tools/`. `tools/list` advertises each tool's JSON Schemas (input and output, from TypeBox);
 * `tools/call` checks the arguments against the input schema, runs the tool inside its `svc.tool`
 * span, and answers structured content plus a short text. Every failure — bad arguments, a
 * service `{detail}`, the plugin not running — is a tool error (`isError: true`) with readable
 * text, never a protocol error.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { Value } from '@sinclair/typebox/value';
import type { TSchema } from '@sinclair/typebox';
import type { SpanExporter } from '@parley/sdk';
import type { McpConfig } from './config.js';
import { describeToolFailure } from './errors.js';
import { PluginClient } from './plugin-client.js';
import { ServiceAccess } from './service.js';
import { loadSkills, type SkillFile } from './skills.js';
import type { ToolDef } from './tool.js';
import { TOOLS } from './tools/index.js';
import { startToolSpan, toolSpanExporter } from './tracing.js';

/** Server name and version announced at initialization. */
export const SERVER_INFO = { name: 'parley', version: '0.1.0' } as const;

/** JSON Schema of a TypeBox schema (TypeBox schemas are JSON Schema; symbols drop out). */
function jsonSchema(schema: TSchema): Tool['inputSchema'] {
  return JSON.parse(JSON.stringify(schema)) as Tool['inputSchema'];
}

/** The shared part of every session: configuration, service access, plugin client, span export. */
export class ToolRuntime {
  readonly service: ServiceAccess;
  readonly plugin: PluginClient;
  readonly spans: SpanExporter;
  readonly skills: readonly SkillFile[];
  private readonly checks = new Map<string, TypeCheck<TSchema>>();

  /**
   * @param config parsed configuration ({@link parseConfig})
   * @param options `cwd`: where svc_compose_team writes (default `process.cwd()`)
   * @throws ConfigError when PARLEY_SKILLS_DIR holds a malformed skill file
   */
  constructor(
    readonly config: McpConfig,
    private readonly options: { cwd?: string } = {},
  ) {
    this.service = new ServiceAccess(config);
    this.plugin = new PluginClient(config);
    this.spans = toolSpanExporter(() => this.service.agent());
    this.skills = loadSkills(config.skillsDir);
    for (const t of TOOLS) this.checks.set(t.name, TypeCompiler.Compile(t.input));
  }

  /** `tools/list` entries. */
  list(): Tool[] {
    return TOOLS.map((t) => ({
      name: t.name,
      title: t.title,
      description: t.description,
      inputSchema: jsonSchema(t.input),
      outputSchema: jsonSchema(t.output) as Tool['outputSchema'],
      ...(t.annotations ? { annotations: { title: t.title, ...t.annotations } } : {}),
    }));
  }

  /** Run `tools/call` for `name` with `args`; never throws. */
  async call(name: string, args: Record<string, unknown> | undefined): Promise<CallToolResult> {
    const tool = TOOLS.find((t) => t.name === name);
    if (!tool) return failure(`unknown tool "${name}"; tools/list names the ${TOOLS.length} tools`);
    const input = Value.Default(tool.input, structuredClone(args ?? {})) as Record<string, unknown>;
    const check = this.checks.get(name)!;
    if (!check.Check(input)) {
      const errors = [...check.Errors(input)].slice(0, 3).map((e) => `${e.path || '/'}: ${e.message}`);
      return failure(`invalid arguments for ${name}: ${errors.join('; ')}`);
    }
    const span = startToolSpan(name, input.traceId as string | undefined, input.parentSpanId as string | undefined);
    try {
      const result = await (tool as ToolDef).run(input, {
        config: this.config,
        service: this.service.forCall(span.traceparent),
        plugin: this.plugin,
        span,
        skills: this.skills,
        cwd: this.options.cwd ?? process.cwd(),
      });
      this.spans.end(span);
      return { content: [{ type: 'text', text: tool.text(result) }], structuredContent: result as Record<string, unknown> };
    } catch (err) {
      const failed = describeToolFailure(err, this.config.endpoint);
      this.spans.end(span, failed.message);
      return failure(failed.message);
    }
  }

  /** Flush spans and stop background work. */
  async close(): Promise<void> {
    await this.spans.flush();
    this.service.close();
  }
}

function failure(text: string): CallToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}

/** A new MCP `Server` (one per stdio process or HTTP session) serving `runtime`'s tools. */
export function createMcpServer(runtime: ToolRuntime): Server {
  const server = new Server(SERVER_INFO, {
    capabilities: { tools: {} },
    instructions:
      `Parley tools for agent ${runtime.config.agentId}: discover agents and skills, check policy before acting, delegate skills, message agents end to end (through the local plugin), audit what you did, and rent marketplace agents.` +
      (runtime.skills.length ? ` This agent offers: ${runtime.skills.map((s) => s.name).join(', ')}.` : ''),
  });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: runtime.list() }));
  server.setRequestHandler(CallToolRequestSchema, (req) => runtime.call(req.params.name, req.params.arguments));
  return server;
}

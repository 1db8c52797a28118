/**
 * `svc_compose_team` (SPEC §4.19): writes one agent definition file per agent — Markdown with a
 * YAML front matter (`name`, `description`, optional `tools`, `model`), the format of Claude Code
 * subagents in `.claude/agents/` — under `outputDir` (default `.claude/agents/`). The output
 * directory must stay inside the tool server's working directory and every file inside the output
 * directory: names are slugs, and a path that would escape (`..`, absolute paths, separators,
 * symbolic links leading out) is refused before anything is written.
 */
import { lstat, mkdir, realpath, writeFile } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { Type, type Static } from '@sinclair/typebox';
import { ToolError } from '../errors.js';
import { defineTool } from '../tool.js';
import { didOf, hubAddressOf } from './common.js';

/** Default output directory (relative to the working directory). */
export const DEFAULT_TEAM_DIR = '.claude/agents/';
const SLUG = /^[a-z0-9][a-z0-9-]{0,63}$/;

const AgentSpec = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 64, description: 'file and agent name: a-z, 0-9, - (becomes <name>.md)' }),
  description: Type.String({ minLength: 1, maxLength: 1000, description: 'when the host should use this agent' }),
  hubName: Type.Optional(Type.String({ minLength: 3, maxLength: 40, description: 'the Parley agent it works with (hub name or DID)' })),
  skills: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 50 })),
  instructions: Type.Optional(Type.String({ maxLength: 20_000 })),
  tools: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 100 })),
  model: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
});
type AgentSpec = Static<typeof AgentSpec>;

/** True when `child` is `parent` or inside it (both absolute, normalised). */
function inside(parent: string, child: string): boolean {
  const rel = relative(parent, child);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel) && rel.split(sep)[0] !== '..');
}

/** A YAML scalar (double-quoted JSON string: valid YAML). */
const yaml = (s: string) => JSON.stringify(s);

/** The definition file of one agent. */
export function agentDefinition(a: AgentSpec): string {
  const lines = ['---', `name: ${a.name}`, `description: ${yaml(a.description)}`];
  if (a.tools?.length) lines.push(`tools: ${a.tools.map((t) => t.replace(/[,\n]/g, ' ')).join(', ')}`);
  if (a.model) lines.push(`model: ${yaml(a.model)}`);
  lines.push('---', '');
  if (a.instructions) lines.push(a.instructions.trim(), '');
  if (a.hubName) {
    const did = didOf(hubAddressOf(a.hubName));
    lines.push(
      `You work with the Parley agent ${did}.`,
      'Check it with svc_get_agent_info before relying on it, open a channel with svc_open_channel, check policy with svc_check_policy and delegate with svc_delegate_skill; read answers with svc_poll_messages.',
      '',
    );
  }
  if (a.skills?.length) lines.push(`Skills: ${a.skills.join(', ')}.`, '');
  return lines.join('\n');
}

/** Resolve and check the output directory and files; nothing is written when any is refused. */
async function plan(cwd: string, outputDir: string, agents: AgentSpec[]): Promise<{ dir: string; files: { path: string; agent: AgentSpec }[] }> {
  const root = await realpath(cwd);
  const dir = resolve(root, outputDir);
  if (!inside(root, dir)) throw new ToolError(`outputDir "${outputDir}" is outside the working directory ${root}: refused`, 400);
  // An existing ancestor reached through a symbolic link must stay inside too.
  let probe = dir;
  for (;;) {
    const real = await realpath(probe).catch(() => undefined);
    if (real !== undefined) {
      if (!inside(root, real)) throw new ToolError(`outputDir "${outputDir}" leads outside the working directory through a symbolic link: refused`, 400);
      break;
    }
    probe = resolve(probe, '..');
  }
  const seen = new Set<string>();
  const files = agents.map((agent) => {
    if (!SLUG.test(agent.name)) throw new ToolError(`agent name "${agent.name}" must be a slug (a-z, 0-9, -; no dots, slashes or spaces): refused`, 400);
    if (seen.has(agent.name)) throw new ToolError(`agent name "${agent.name}" appears twice`, 400);
    seen.add(agent.name);
    const path = join(dir, `${agent.name}.md`);
    if (!inside(dir, path)) throw new ToolError(`"${agent.name}" escapes outputDir: refused`, 400);
    return { path, agent };
  });
  return { dir, files };
}

export const composeTeam = defineTool({
  name: 'svc_compose_team',
  title: 'Compose a team',
  description:
    'Write one agent definition file per agent (Markdown with name/description/tools front matter, the Claude Code subagent format) under outputDir (default .claude/agents/, inside the working directory). Existing files of the same names are replaced; paths that would leave outputDir are refused.',
  input: Type.Object({
    agents: Type.Array(AgentSpec, { minItems: 1, maxItems: 50 }),
    outputDir: Type.Optional(Type.String({ minLength: 1, maxLength: 500, default: DEFAULT_TEAM_DIR })),
  }),
  output: Type.Object({ output_dir: Type.String(), files: Type.Array(Type.String()) }),
  annotations: { destructiveHint: true, idempotentHint: true },
  async run(args, ctx) {
    const { dir, files } = await plan(ctx.cwd, args.outputDir ?? DEFAULT_TEAM_DIR, args.agents);
    await mkdir(dir, { recursive: true });
    for (const f of files) {
      const existing = await lstat(f.path).catch(() => undefined);
      if (existing?.isSymbolicLink()) throw new ToolError(`${f.path} is a symbolic link: refused`, 400);
      await writeFile(f.path, agentDefinition(f.agent), { mode: 0o644 });
    }
    return { output_dir: dir, files: files.map((f) => f.path) };
  },
  text: (r) => `Wrote ${r.files.length} agent definition(s) in ${r.output_dir}:\n${r.files.join('\n')}`,
});

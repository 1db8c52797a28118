/**
 * `svc_compose_team` (contract §4.19): writes one agent definition file per agent — Markdown with a
 * YAML front matter (`name`, `description`, optional `tools`, `model`), the format of Claude Code
 * subagents in `.claude/agents/` — under `outputDir` (default `.claude/agents/`). The output
 * directory must stay inside the tool server's working directory and every file inside the output
 * directory: names are slugs, and a path that would escape (`..`, absolute paths, separators,
 * symbolic links leading out) is refused before anything is written.
 */
import { constants } from 'node:fs';
import { lstat, mkdir, open, realpath } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { Type, type Static } from '@sinclair/typebox';
import { ToolError } from '../errors.js';
import { defineTool } from '../tool.js';
import { didOf, hubAddressOf } from './common.js';

/** Default output directory (relative to the working directory). */
export const DEFAULT_TEAM_DIR = '.claude/agents/';
const SLUG = /^[a-z0-9][a-z0-9-]{0,63}$/;
/** A tool name in the front matter: MCP and host tool names, patterns like `Bash(git *)`; no line breaks, commas or quotes. */
const TOOL = /^[A-Za-z0-9_.:*()/ -]{1,100}$/;

const AgentSpec = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 64, description: 'file and agent name: a-z, 0-9, - (becomes <name>.md)' }),
  description: Type.String({ minLength: 1, maxLength: 1000, description: 'when the host should use this agent' }),
  hubName: Type.Optional(Type.String({ minLength: 3, maxLength: 40, description: 'the Parley agent it works with (hub name or DID)' })),
  skills: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 50 })),
  instructions: Type.Optional(Type.String({ maxLength: 20_000 })),
  tools: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 100, pattern: TOOL.source, description: 'host tool names, e.g. Read, svc_delegate_skill, Bash(git *)' }), { maxItems: 100 })),
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

/**
 * The definition file of one agent (`a` checked by {@link plan}: its hub name is valid and its tool
 * names match TOOL).
 */
export function agentDefinition(a: AgentSpec): string {
  const lines = ['---', `name: ${a.name}`, `description: ${yaml(a.description)}`];
  if (a.tools?.length) lines.push(`tools: ${a.tools.join(', ')}`);
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
    if (agent.hubName !== undefined) hubAddressOf(agent.hubName);
    const badTool = agent.tools?.find((t) => !TOOL.test(t));
    if (badTool !== undefined) throw new ToolError(`tool name ${JSON.stringify(badTool)} of "${agent.name}" is not allowed (letters, digits and _ . : * ( ) / - space): refused`, 400);
    return { path, agent };
  });
  for (const f of files) {
    const existing = await lstat(f.path).catch(() => undefined);
    if (existing?.isSymbolicLink()) throw new ToolError(`${f.path} is a symbolic link: refused`, 400);
  }
  return { dir, files };
}

/** Write `text` to `path` without following a symbolic link put there since {@link plan} (O_NOFOLLOW). */
async function writeNoFollow(path: string, text: string): Promise<void> {
  const handle = await open(path, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW, 0o644).catch((err: NodeJS.ErrnoException) => {
    throw err.code === 'ELOOP' ? new ToolError(`${path} became a symbolic link: refused`, 400) : err;
  });
  try {
    await handle.writeFile(text, 'utf8');
  } finally {
    await handle.close();
  }
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
    for (const f of files) await writeNoFollow(f.path, agentDefinition(f.agent));
    return { output_dir: dir, files: files.map((f) => f.path) };
  },
  text: (r) => `Wrote ${r.files.length} agent definition(s) in ${r.output_dir}:\n${r.files.join('\n')}`,
});

/**
 * `PARLEY_SKILLS_DIR` (design §8.27): the skills this agent offers, one file each — `<name>.json`
 * (`{name?, description?, input_schema?}`) or `<name>.md` (Markdown; an optional YAML-like front
 * matter `name:` / `description:` line, else the first heading or paragraph describes it). Read
 * once at start; a file that cannot be parsed stops the server with one line.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { basename, extname, join } from 'node:path';
import { ConfigError } from './config.js';

/** One skill the agent offers. */
export interface SkillFile {
  name: string;
  description: string;
  input_schema?: Record<string, unknown>;
  file: string;
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,99}$/;

function frontMatter(text: string): Record<string, string> {
  const m = /^---\r?\n([\s\S]*?)\r?\n---/.exec(text);
  const out: Record<string, string> = {};
  for (const line of m?.[1]?.split(/\r?\n/) ?? []) {
    const kv = /^([A-Za-z_]+):\s*(.*)$/.exec(line);
    if (kv) out[kv[1]!.toLowerCase()] = kv[2]!.trim().replace(/^["']|["']$/g, '');
  }
  return out;
}

function markdownSkill(file: string, text: string): SkillFile {
  const fm = frontMatter(text);
  const body = text.replace(/^---[\s\S]*?---\r?\n?/, '');
  const firstLine = body.split(/\r?\n/).map((l) => l.replace(/^#+\s*/, '').trim()).find((l) => l.length > 0) ?? '';
  return { name: fm.name ?? basename(file, extname(file)), description: fm.description ?? firstLine, file };
}

function jsonSkill(file: string, text: string): SkillFile {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new ConfigError(`PARLEY_SKILLS_DIR: ${file} is not valid JSON (${(err as Error).message})`);
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw new ConfigError(`PARLEY_SKILLS_DIR: ${file} must hold a JSON object {name, description, input_schema}`);
  const d = doc as Record<string, unknown>;
  const schema = d.input_schema;
  if (schema !== undefined && (typeof schema !== 'object' || schema === null || Array.isArray(schema))) throw new ConfigError(`PARLEY_SKILLS_DIR: ${file}: input_schema must be a JSON Schema object`);
  return {
    name: typeof d.name === 'string' ? d.name : basename(file, extname(file)),
    description: typeof d.description === 'string' ? d.description : '',
    ...(schema ? { input_schema: schema as Record<string, unknown> } : {}),
    file,
  };
}

/**
 * Read the skills of `dir` (`.json` and `.md` files, sorted by file name; other files ignored).
 * @throws ConfigError for an unreadable directory, a malformed file, a bad or duplicate name.
 */
export function loadSkills(dir: string | undefined): SkillFile[] {
  if (dir === undefined) return [];
  const skills: SkillFile[] = [];
  for (const entry of readdirSync(dir).sort()) {
    const ext = extname(entry).toLowerCase();
    if (ext !== '.json' && ext !== '.md') continue;
    const file = join(dir, entry);
    const text = readFileSync(file, 'utf8');
    const skill = ext === '.json' ? jsonSkill(file, text) : markdownSkill(file, text);
    if (!NAME.test(skill.name)) throw new ConfigError(`PARLEY_SKILLS_DIR: ${file}: skill name "${skill.name}" must be 1-100 of A-Z a-z 0-9 _ . : - (starting with a letter or digit)`);
    if (skills.some((s) => s.name === skill.name)) throw new ConfigError(`PARLEY_SKILLS_DIR: skill "${skill.name}" is defined twice (${file})`);
    skills.push(skill);
  }
  return skills;
}

#!/usr/bin/env node
/**
 * `npm run -s inspect -- --method tools/list` (and any other option of the MCP Inspector CLI,
 * e.g. `--method tools/call --tool-name svc_discover_agents --tool-arg query=research`): the
 * Inspector CLI (`@modelcontextprotocol/inspector-cli`, a development dependency of the
 * repository) against this repository's tool server over stdio, from the repository root.
 *
 * inspector-cli 1.0.3 finds its own package.json relative to the working directory, so it runs
 * from its build directory; the tool server it starts is `npm --prefix <repository root> run -s
 * mcp`, which runs in the repository root whatever the working directory, so relative settings
 * (`PARLEY_STATE_DIR`, default `.parley/mcp`) mean what they mean for `npm run mcp`. The
 * environment (`PARLEY_*`) is passed through, and checked first: a missing or malformed setting
 * is reported with the tool server's own line (the Inspector would only say the connection
 * closed). Exit status: the Inspector's; 2 for a setting, 1 when the Inspector is not installed.
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runIfMain } from '@parley/sdk/node';
import { parseArgs } from './cli.js';
import { ConfigError, parseConfig } from './config.js';

/** The repository root (this file is `packages/mcp/src/inspect-cli.ts`, or its build in `dist/`). */
export const REPOSITORY_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/**
 * The Inspector CLI's arguments: the target command first (`npm`), the caller's options, then
 * after `--` the rest of the target (`--prefix <root> run -s mcp`).
 */
export function inspectorArgs(argv: string[], root = REPOSITORY_ROOT): string[] {
  return ['npm', ...argv, '--', '--prefix', root, 'run', '-s', 'mcp'];
}

/** Run the Inspector CLI to its end; returns its exit status. */
export async function main(argv: string[]): Promise<number> {
  try {
    parseConfig(parseArgs([], process.env).settings);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    console.error(`inspect: ${err.message}`);
    return 2;
  }
  let index: string;
  try {
    index = join(dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/inspector-cli/package.json')), 'build', 'index.js');
  } catch {
    console.error('inspect: @modelcontextprotocol/inspector-cli is not installed (a development dependency of the repository: npm ci); or run npx @modelcontextprotocol/inspector npm run -s mcp');
    return 1;
  }
  const child = spawn(process.execPath, [index, ...inspectorArgs(argv)], { cwd: dirname(index), stdio: 'inherit' });
  return new Promise((resolve) => {
    child.on('error', () => resolve(1));
    child.on('close', (code) => resolve(code ?? 1));
  });
}

runIfMain(import.meta.url, 'inspect', main);

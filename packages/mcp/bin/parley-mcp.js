#!/usr/bin/env node
// `parley-mcp`: the MCP tool server (src/cli.ts, built into dist/cli.js; see launch.js).
import { launch } from './launch.js';

await launch('parley-mcp', '../dist/cli.js');

#!/usr/bin/env node
// `parley-bridge`: the bridge to a rented agent (src/bridge-cli.ts, built into dist/bridge-cli.js; see launch.js).
import { launch } from './launch.js';

await launch('parley-bridge', '../dist/bridge-cli.js');

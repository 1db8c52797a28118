/**
 * Where the tool server finds its agent's plugin (plugin-client.ts `locatePlugin`): the URL given
 * (`PARLEY_PLUGIN_URL`), else the one the running plugin notes in `<state dir>/plugin.json` when it
 * is a loopback URL (the plugin's token goes there), else the tool server's own default port 18791.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_MCP_PLUGIN_URL, DEFAULT_STATE_DIR, parseConfig } from '../src/config.js';
import { locatePlugin } from '../src/plugin-client.js';

describe('locating the plugin', () => {
  const dir = mkdtempSync(join(tmpdir(), 'parley-plugin-location-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const note = (url: string) => writeFileSync(join(dir, 'plugin.json'), JSON.stringify({ url, pid: 1 }));

  it('uses its own defaults: state directory .parley/mcp, plugin port 18791', async () => {
    expect(DEFAULT_STATE_DIR).toBe('.parley/mcp');
    expect(DEFAULT_MCP_PLUGIN_URL).toBe('http://127.0.0.1:18791');
    const config = parseConfig({ PARLEY_AGENT_ID: 'did:hub:abc', PARLEY_API_KEY: `svc_agent_sk_dev_${'a'.repeat(64)}` });
    expect(await locatePlugin(config)).toBe('http://127.0.0.1:18791');
  });

  it('follows the running plugin of the state directory, only to a loopback address', async () => {
    expect(await locatePlugin({ pluginUrl: undefined, stateDir: dir })).toBe(DEFAULT_MCP_PLUGIN_URL);
    note('http://127.0.0.1:40123/');
    expect(await locatePlugin({ pluginUrl: undefined, stateDir: dir })).toBe('http://127.0.0.1:40123');
    expect(await locatePlugin({ pluginUrl: 'http://127.0.0.1:5000', stateDir: dir })).toBe('http://127.0.0.1:5000');
    note('http://attacker.example:40123');
    expect(await locatePlugin({ pluginUrl: undefined, stateDir: dir })).toBe(DEFAULT_MCP_PLUGIN_URL);
    writeFileSync(join(dir, 'plugin.json'), '{not json');
    expect(await locatePlugin({ pluginUrl: undefined, stateDir: dir })).toBe(DEFAULT_MCP_PLUGIN_URL);
  });
});

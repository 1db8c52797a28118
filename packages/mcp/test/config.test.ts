/**
 * Configuration at start (design §8.27): a missing or malformed setting stops the tool
 * server with one clear line and exit status 2 — checked on the real command over stdio — and
 * flags carry the same names as the environment.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../src/config.js';
import { parseArgs } from '../src/cli.js';
import { loadSkills } from '../src/skills.js';
import { MCP_CLI, runEntry } from './fixtures.js';

const KEY = `svc_agent_sk_dev_${'a'.repeat(64)}`;

/** Run `parley-mcp` with `env` (nothing else inherited but PATH/HOME) and collect its exit. */
const runCli = (env: Record<string, string>, args: string[] = []) => runEntry(MCP_CLI, args, env);

describe('configuration at start', () => {
  it('stops with one line and status 2 when the agent id is missing, before any tool call', async () => {
    const r = await runCli({ PARLEY_API_KEY: KEY });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toEqual(['parley-mcp: PARLEY_AGENT_ID is required: the agent\'s hub DID, e.g. did:hub:my-agent (flag --agent-id)']);
  });

  it('stops on a malformed API key, endpoint or agent id, and on a flag without value', async () => {
    expect((await runCli({ PARLEY_AGENT_ID: 'did:hub:my-agent', PARLEY_API_KEY: 'svc_agent_sk_dev_123' })).stderr).toMatch(/^parley-mcp: PARLEY_API_KEY is malformed/);
    expect((await runCli({ PARLEY_AGENT_ID: 'did:web:x', PARLEY_API_KEY: KEY })).stderr).toMatch(/^parley-mcp: PARLEY_AGENT_ID must be did:hub:<address>/);
    const flags = await runCli({}, ['--agent-id', 'did:hub:my-agent', '--api-key', KEY, '--endpoint', 'ftp://x']);
    expect(flags.code).toBe(2);
    expect(flags.stderr).toMatch(/^parley-mcp: PARLEY_ENDPOINT must be an http\(s\) URL/);
    expect((await runCli({}, ['--agent-id'])).stderr).toMatch(/--agent-id needs a value/);
  });

  it('parses every setting, with the documented defaults, and flags over the environment', () => {
    const c = parseConfig({ PARLEY_AGENT_ID: 'did:hub:My-Agent', PARLEY_API_KEY: KEY });
    expect(c).toMatchObject({ endpoint: 'http://127.0.0.1:8080', agentId: 'did:hub:my-agent', hubAddress: 'my-agent', credentials: { kind: 'api_key', apiKey: KEY }, pluginUrl: undefined, stateDir: '.parley/mcp' });
    const args = parseArgs(['--http', '--endpoint', 'http://h:1/', '--plugin-url=http://127.0.0.1:1/'], { PARLEY_ENDPOINT: 'http://env:2', PARLEY_AGENT_ID: 'did:hub:abc' });
    expect(args.http).toBe(8765);
    expect(args.settings).toMatchObject({ PARLEY_ENDPOINT: 'http://h:1/', PARLEY_AGENT_ID: 'did:hub:abc', PARLEY_PLUGIN_URL: 'http://127.0.0.1:1/' });
    expect(parseArgs(['--http', '4000'], {}).http).toBe(4000);
    expect(() => parseArgs(['--bogus'], {})).toThrow(ConfigError);
  });

  it('accepts only a loopback plugin URL and a long enough HTTP token', () => {
    const base = { PARLEY_AGENT_ID: 'did:hub:abc', PARLEY_API_KEY: KEY };
    expect(parseConfig({ ...base, PARLEY_PLUGIN_URL: 'http://localhost:1234/' }).pluginUrl).toBe('http://localhost:1234');
    expect(parseConfig({ ...base, PARLEY_PLUGIN_URL: 'http://[::1]:1234' }).pluginUrl).toBe('http://[::1]:1234');
    expect(() => parseConfig({ ...base, PARLEY_PLUGIN_URL: 'http://plugin.example.com:18790' })).toThrow(/PARLEY_PLUGIN_URL must be a loopback address/);
    expect(() => parseConfig({ ...base, PARLEY_PLUGIN_URL: 'http://10.0.0.5:18790' })).toThrow(/loopback/);
    expect(parseConfig({ ...base, PARLEY_HTTP_TOKEN: 'a'.repeat(32) }).httpToken).toBe('a'.repeat(32));
    expect(() => parseConfig({ ...base, PARLEY_HTTP_TOKEN: 'short' })).toThrow(/PARLEY_HTTP_TOKEN must be 32-512/);
  });

  it('takes a private key with a device id instead of an API key, and refuses half of it', () => {
    const dev = parseConfig({ PARLEY_AGENT_ID: 'did:hub:abc', PARLEY_PRIVATE_KEY: 'AB'.repeat(32), PARLEY_DEVICE_ID: '6F9619FF-8B86-D011-B42D-00C04FC964FF' });
    expect(dev.credentials).toEqual({ kind: 'device', deviceId: '6f9619ff-8b86-d011-b42d-00c04fc964ff', privateKeyHex: 'ab'.repeat(32) });
    expect(() => parseConfig({ PARLEY_AGENT_ID: 'did:hub:abc', PARLEY_PRIVATE_KEY: 'ab'.repeat(32) })).toThrow(/PARLEY_DEVICE_ID is required/);
    expect(() => parseConfig({ PARLEY_AGENT_ID: 'did:hub:abc', PARLEY_PRIVATE_KEY: 'xyz' })).toThrow(/64 hex/);
    expect(() => parseConfig({ PARLEY_AGENT_ID: 'did:hub:abc' })).toThrow(/PARLEY_API_KEY is required/);
  });

  it('reads the skills directory at start and stops on a malformed skill file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'parley-skills-'));
    writeFileSync(join(dir, 'summarize.md'), '---\nname: summarize\ndescription: Summarize a document\n---\n# Summaries\n');
    writeFileSync(join(dir, 'translate.json'), JSON.stringify({ description: 'Translate text', input_schema: { type: 'object' } }));
    writeFileSync(join(dir, 'notes.txt'), 'ignored');
    expect(loadSkills(dir).map((s) => [s.name, s.description])).toEqual([
      ['summarize', 'Summarize a document'],
      ['translate', 'Translate text'],
    ]);
    writeFileSync(join(dir, 'broken.json'), '{not json');
    const r = await runCli({ PARLEY_AGENT_ID: 'did:hub:abc', PARLEY_API_KEY: KEY, PARLEY_SKILLS_DIR: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^parley-mcp: PARLEY_SKILLS_DIR: .*broken\.json is not valid JSON/);
    expect((await runCli({ PARLEY_AGENT_ID: 'did:hub:abc', PARLEY_API_KEY: KEY, PARLEY_SKILLS_DIR: join(dir, 'nope') })).stderr).toMatch(/PARLEY_SKILLS_DIR is not a directory/);
  });
});

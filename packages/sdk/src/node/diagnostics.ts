/**
 * `parley-agent status` and `parley-agent doctor`: what a state directory holds and
 * whether its plugin runs, and a checklist with one line per check (`ok …` or `FAIL … fix: …`).
 * The plugin token is only ever sent to a loopback plugin URL (127.0.0.0/8, ::1, localhost).
 */
import { stat, readFile } from 'node:fs/promises';
import path from 'node:path';
import { ParleyApiError } from '../client/errors.js';
import { ParleyClient } from '../client/rest.js';
import { AGENT_KEY, IDENTITY_KEY, loadAgentState, type AgentRecord } from './agent.js';
import { FileSessionStore } from './file-store.js';
import { SealedStoreError } from './sealing-keys.js';
import { openStateStore, type StoreProtection } from './state-store.js';
import { DEFAULT_PLUGIN_URL, PLUGIN_TOKEN_FILE, type PluginStatus } from './plugin-api.js';
import { isLoopbackUrl, PLUGIN_INFO_FILE } from './plugin.js';
import { API_AGENT_KEY, API_KEY_PATTERN, loadApiKeyRecord, type ApiKeyAgentRecord } from './runtime.js';
import { checkHubIdentity } from './hub-check.js';

/** Where the commands write. */
export interface DiagnosticsIo {
  out: (line: string) => void;
  err: (line: string) => void;
}

interface Local {
  /** Names the state files (the same names sealed or plain). */
  store: FileSessionStore;
  identity: boolean;
  /** The device's Ed25519 identity public key, when there is one. */
  identityKey?: Uint8Array;
  enrolled: AgentRecord | undefined;
  apiKey: ApiKeyAgentRecord | undefined;
  problem?: string;
  /** The problem is the key: none given, wrong, or of another kind than the one that sealed the directory. */
  keyProblem?: boolean;
}

async function readLocal(stateDir: string, protection: StoreProtection): Promise<Local> {
  const out: Local = { store: new FileSessionStore(stateDir), identity: false, enrolled: undefined, apiKey: undefined };
  try {
    const store = await openStateStore(stateDir, protection);
    const { identity, record } = await loadAgentState(store);
    out.identity = identity !== undefined;
    if (identity) out.identityKey = identity.identityPublicKey;
    out.enrolled = record;
    out.apiKey = await loadApiKeyRecord(store);
  } catch (err) {
    out.problem = (err as Error).message;
    out.keyProblem = err instanceof SealedStoreError && ['no_key', 'key_unavailable', 'wrong_key', 'sealed_store'].includes(err.code);
  }
  return out;
}

async function pluginUrlOf(stateDir: string, given?: string): Promise<string> {
  if (given) return given.replace(/\/+$/, '');
  try {
    const info = JSON.parse(await readFile(path.join(stateDir, PLUGIN_INFO_FILE), 'utf8')) as { url?: string };
    if (typeof info.url === 'string') return info.url;
  } catch {
    /* not running, or never started: the default */
  }
  return DEFAULT_PLUGIN_URL;
}

async function readToken(stateDir: string): Promise<string | undefined> {
  try {
    return (await readFile(path.join(stateDir, PLUGIN_TOKEN_FILE), 'utf8')).trim();
  } catch {
    return undefined;
  }
}

/** `GET /v1/status` of a plugin: the status, or why not. */
async function pluginStatus(url: string, token: string | undefined): Promise<{ status?: PluginStatus; error?: string }> {
  try {
    const res = await fetch(`${url}/v1/status`, { headers: token ? { authorization: `Bearer ${token}` } : {}, signal: AbortSignal.timeout(3000) });
    const body = (await res.json().catch(() => ({}))) as PluginStatus & { detail?: string };
    if (!res.ok) return { error: `${url} answered ${res.status}${body.detail ? `: ${body.detail}` : ''}` };
    return { status: body };
  } catch (err) {
    return { error: `nothing answers at ${url} (${(err as Error).message})` };
  }
}

const notLoopback = (url: string) => `${url} is not a loopback address (127.0.0.0/8, ::1, localhost): the plugin token is only sent to the local plugin`;

/**
 * `parley-agent status`: the identity of the state directory, and the running plugin's status.
 * @returns 0 when the plugin answers, 1 otherwise, 2 for a plugin URL that is not loopback (the
 * token is not sent there).
 */
export async function status(options: { stateDir: string; pluginUrl?: string; protection: StoreProtection }, io: DiagnosticsIo): Promise<number> {
  const local = await readLocal(options.stateDir, options.protection);
  io.out(`state directory: ${path.resolve(options.stateDir)}`);
  if (local.problem) io.out(`state: unreadable (${local.problem})`);
  else if (local.enrolled) io.out(`identity: enrolled device ${local.enrolled.device_id} (${local.enrolled.status}) at ${local.enrolled.server}`);
  else if (local.apiKey) io.out(`identity: API-key agent ${local.apiKey.device_id ? `device ${local.apiKey.device_id}` : '(key material not registered yet)'} at ${local.apiKey.server}`);
  else io.out(`identity: ${local.identity ? 'device keys only (not enrolled nor registered)' : 'none'}`);
  const url = await pluginUrlOf(options.stateDir, options.pluginUrl);
  if (!isLoopbackUrl(url)) {
    io.err(`plugin: refused ${options.pluginUrl ? '--plugin-url ' : ''}${notLoopback(url)}`);
    return 2;
  }
  const { status: s, error } = await pluginStatus(url, await readToken(options.stateDir));
  if (!s) {
    io.out(`plugin: not running (${error})`);
    return 1;
  }
  io.out(`plugin: running at ${url}`);
  io.out(`device: ${s.device_id} (${s.auth === 'api_key' ? 'API key' : 'enrolled device'})`);
  io.out(`hub address: ${s.hub_address ?? 'unknown'}`);
  io.out(`server: ${s.server}`);
  io.out(`connected: ${s.connected ? 'yes' : 'no'}`);
  io.out(`channels: ${s.channels}, inbox: ${s.inbox} message(s), MLS: ${s.mls ? 'on' : 'off'}, since ${s.started_at}`);
  return 0;
}

/**
 * `parley-agent doctor`: one line per check, `ok …` or `FAIL … fix: …`; the last one is the hub
 * identity the MCP tool server needs (`hubAddress`: `--hub-address` or `PARLEY_AGENT_ID`; see
 * hub-register.ts {@link checkHubIdentity}).
 * @returns 1 when any check failed, else 0.
 */
export async function doctor(options: { stateDir: string; server?: string; apiKey?: string; hubAddress?: string; protection: StoreProtection }, io: DiagnosticsIo): Promise<number> {
  const dir = path.resolve(options.stateDir);
  const local = await readLocal(options.stateDir, options.protection);
  let failed = 0;
  const ok = (line: string) => io.out(`ok    ${line}`);
  const fail = (line: string, fix: string) => {
    failed++;
    io.out(`FAIL  ${line} — fix: ${fix}`);
  };
  const runHint = options.apiKey ? `parley-agent run --api-key <key> --state-dir ${dir}` : `parley-agent run --state-dir ${dir}`;

  // Local identity and key material.
  if (local.problem && local.keyProblem) fail(`state directory ${dir} cannot be opened: ${local.problem}`, "give the directory's key: --key-file PATH (PARLEY_KEY_FILE) or PARLEY_PASSPHRASE");
  else if (local.problem) fail(`state directory ${dir} is unreadable: ${local.problem}`, 'restore it from a backup, or use a new --state-dir (an API key then needs rotating)');
  else if (!local.identity) fail(`no device keys in ${local.store.fileFor(IDENTITY_KEY)}`, options.apiKey ? `start the agent once: ${runHint}` : 'enroll with `parley-agent enroll --invite …` or start an API-key agent with `parley-agent run --api-key …`');
  else ok(`device keys in ${local.store.fileFor(IDENTITY_KEY)}`);

  if (options.apiKey !== undefined && !API_KEY_PATTERN.test(options.apiKey)) fail('--api-key is not svc_agent_sk_{prod|staging|dev}_ + 64 hex characters', 'copy the whole key as the service showed it at creation');
  if (local.enrolled) {
    if (local.enrolled.status === 'ACTIVE') ok(`enrolled device ${local.enrolled.device_id} is activated (${local.store.fileFor(AGENT_KEY)})`);
    else fail(`enrolled device ${local.enrolled.device_id} is not activated yet`, `run \`parley-agent enroll --state-dir ${dir}\` again to keep waiting for the owner's approval`);
  } else if (local.apiKey) {
    if (options.apiKey !== undefined && options.apiKey !== local.apiKey.api_key) fail('the state directory belongs to another API key', `use the key saved in ${local.store.fileFor(API_AGENT_KEY)}, or another --state-dir for this key`);
    if (local.apiKey.device_id) ok(`API key bound to device ${local.apiKey.device_id} (key material registered)`);
    else fail('the API key has no registered key material yet', `start the agent once so its first connection registers it: ${runHint}`);
  } else if (!local.problem) {
    fail('no enrolled device nor API-key agent in this state directory', options.apiKey ? `start it: ${runHint}` : 'enroll with an invite, or run with --api-key');
  }

  // Service.
  const server = options.server ?? local.enrolled?.server ?? local.apiKey?.server;
  let service: ParleyClient | undefined;
  if (!server) {
    fail('no service address known', 'pass --server URL');
  } else {
    const client = new ParleyClient({ baseUrl: server, timeoutMs: 5000, ...(options.apiKey ?? local.apiKey?.api_key ? { apiKey: options.apiKey ?? local.apiKey!.api_key } : {}) });
    try {
      const h = await client.health();
      ok(`service ${client.baseUrl} reachable (GET /health: ${h.status})`);
      service = client;
      const key = options.apiKey ?? local.apiKey?.api_key;
      if (key !== undefined && API_KEY_PATTERN.test(key)) {
        try {
          await client.listA2aChannels();
          ok('the service accepts the API key');
        } catch (err) {
          if (err instanceof ParleyApiError && (err.status === 401 || err.status === 403)) fail(`the service refuses the API key (${err.status}: ${err.detail})`, 'the key was revoked, rotated or deleted: ask the owner for a new one and use a new --state-dir');
          else fail(`checking the API key failed: ${(err as Error).message}`, 'retry; check the service');
        }
      }
    } catch (err) {
      fail(`service ${server} not reachable: ${(err as Error).message}`, 'check --server and that the service is running');
    }
  }

  // Plugin token and plugin.
  const tokenFile = path.join(dir, PLUGIN_TOKEN_FILE);
  try {
    const st = await stat(tokenFile);
    const mode = st.mode & 0o777;
    if (process.platform !== 'win32' && mode !== 0o600) fail(`plugin token ${tokenFile} has mode ${mode.toString(8).padStart(4, '0')}, not 0600`, `chmod 600 ${tokenFile}`);
    else ok(`plugin token ${tokenFile} present (mode 0600)`);
  } catch {
    fail(`no plugin token at ${tokenFile}`, `start the plugin once (${runHint}); it writes the token`);
  }
  const url = await pluginUrlOf(options.stateDir);
  const { status: s, error } = isLoopbackUrl(url) ? await pluginStatus(url, await readToken(options.stateDir)) : { status: undefined, error: notLoopback(url) };
  if (!s) fail(`plugin not running: ${error}`, `start it: ${runHint}`);
  else if (!s.connected) fail(`plugin running at ${url} but not connected to the service`, 'check the agent output and --server; it reconnects by itself');
  else ok(`plugin running at ${url}, connected as ${s.device_id}`);

  // The hub identity the MCP tool server names (PARLEY_AGENT_ID).
  const hub = await checkHubIdentity({
    stateDir: options.stateDir,
    given: options.hubAddress,
    fromPlugin: s?.hub_address,
    client: service,
    identityKey: local.identityKey,
    registerHint: `parley-agent hub-register --hub-address NAME --owner-token OWNER_JWT --state-dir ${dir}`,
  });
  if ('ok' in hub) ok(hub.ok);
  else fail(hub.fail, hub.fix);

  io.out(failed === 0 ? 'all checks passed' : `${failed} check(s) failed`);
  return failed === 0 ? 0 : 1;
}

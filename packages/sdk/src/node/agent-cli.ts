#!/usr/bin/env node
/**
 * `parley-agent`: a Parley agent on real keys (contract §3.1, §4.3–4.5, §6.1). From the repository:
 * `npm run agent -- <command> …`.
 *
 *   parley-agent enroll --invite svc_tok_… [--server http://127.0.0.1:8080] [--state-dir .parley/agent-state]
 *                       [--name NAME] [--no-mls] [--poll-interval SECONDS]
 *       create keys, enroll, wait for the owner's approval, activate, then run the echo agent
 *   parley-agent run [--state-dir .parley/agent-state] [--no-mls] [--plugin-port 18790] [--plugin-host 127.0.0.1] [--no-plugin]
 *       resume an activated agent
 *   enroll and run also take --require-pq (or PARLEY_REQUIRE_PQ=1): refuse classical end-to-end
 *       sessions (no X3DH without the peer's PQ prekey, no non-hybrid MLS group; PQXDH rev. 3)
 *   parley-agent run --api-key svc_agent_sk_… --server URL [--state-dir DIR] [--plugin-port …] [--no-plugin]
 *       run an API-key agent (keys generated and registered on the first connection)
 *   parley-agent status [--state-dir DIR] [--plugin-url URL]
 *   parley-agent doctor [--state-dir DIR] [--server URL] [--api-key KEY] [--hub-address NAME]
 *   parley-agent hub-register --hub-address NAME --owner-token JWT [--display-name TEXT] [--description TEXT]
 *                             [--capability NAME]… [--server URL] [--state-dir DIR]
 *       give the agent a hub identity (hub-register.ts); prints the MCP tool server's environment
 *   parley-agent card publish [--owner-token JWT] [--plugin-port PORT] [--force] [--server URL] [--state-dir DIR]
 *       sign and publish the agent's A2A Agent Card (agent-card-publish.ts); `run` publishes it
 *       at start when the agent has a hub identity and the stored card is stale
 *   every command: --key-file PATH (or PARLEY_KEY_FILE, or PARLEY_PASSPHRASE), or --insecure-plain-store
 *
 * `run` (and `enroll`, which runs the agent once activated) also serves the local plugin (the
 * loopback HTTP API of `plugin-api.ts`) unless `--no-plugin`; with `--a2a-upstream URL`
 * (`PARLEY_A2A_UPSTREAM`) the plugin answers A2A calls reaching the agent from that loopback A2A
 * server (`a2a-upstream.ts`).
 *
 * The state directory is sealed at rest (`state-store.ts`) under a key file (`--key-file PATH`
 * or `PARLEY_KEY_FILE`) or a passphrase (`PARLEY_PASSPHRASE`); plain files only with
 * `--insecure-plain-store` or `PARLEY_STORE=plain`. Every command needs one of them.
 *
 * The echo agent answers text with an echo and every decision_request with the default option
 * (else the first), end-to-end encrypted; it exits with status 0 and a message when the owner
 * revokes it (socket closed with 4001), 1 on other failures, 2 on usage errors.
 */
import { parseArgs } from 'node:util';
import { runIfMain } from './entry.js';
import { EnrollmentRejectedError, EnrollmentTimeoutError } from '../client/enrollment.js';
import { ParleyApiError, ParleyNetworkError } from '../client/errors.js';
import { AgentStateError, enrollAgentDevice, startEchoAgent, type AgentExit } from './agent.js';
import { DEFAULT_AGENT_STATE_DIR, serviceUrlFromEnv } from './cli-defaults.js';
import { doctor, status } from './diagnostics.js';
import { checkA2aUpstream } from './a2a-upstream.js';
import { hubRegisterCommand } from './hub-register.js';
import { cardPublishCommand, publishCardIfStale } from './agent-card-publish.js';
import { DEFAULT_PLUGIN_PORT } from './plugin-api.js';
import { isLoopbackHost, startPlugin, type PluginBackend, type RunningPlugin } from './plugin.js';
import { loadApiKeyRecord, startApiKeyAgent } from './runtime.js';
import { SealedStoreError } from './sealing-keys.js';
import { chooseStoreProtection, openStateStore, type StoreProtection } from './state-store.js';

/** Usage text of the command. */
export const USAGE = `usage:
  parley-agent enroll --invite svc_tok_… [--server URL] [--state-dir DIR] [--name NAME] [--no-mls] [--require-pq] [--poll-interval SECONDS]
  parley-agent run [--state-dir DIR] [--no-mls] [--require-pq] [--plugin-port PORT] [--plugin-host HOST] [--no-plugin] [--a2a-upstream URL]
  parley-agent run --api-key svc_agent_sk_… [--server URL] [--state-dir DIR] [--plugin-port PORT] [--plugin-host HOST] [--no-plugin] [--a2a-upstream URL]
  parley-agent status [--state-dir DIR] [--plugin-url URL]
  parley-agent doctor [--state-dir DIR] [--server URL] [--api-key KEY] [--hub-address NAME]
  parley-agent hub-register --hub-address NAME --owner-token JWT [--display-name TEXT] [--description TEXT]
                            [--capability NAME]… [--server URL] [--state-dir DIR]
  parley-agent card publish [--owner-token JWT] [--plugin-port PORT] [--force] [--server URL] [--state-dir DIR]
  every command also takes --key-file PATH or --insecure-plain-store (see "keys at rest")

  --server         service base URL (default PUBLIC_URL, else http://HOST:PORT as the service reads
                   them, else http://127.0.0.1:8080)
  --state-dir      where keys, device token and session state are kept (default .parley/agent-state)
  --name           device name shown to the owner (default: the invite's label)
  --no-mls         use X3DH + Double Ratchet only
  --require-pq     refuse classical end-to-end sessions: X3DH without the peer's post-quantum prekey
                   (PQXDH) and MLS groups of a non-hybrid ciphersuite; env PARLEY_REQUIRE_PQ=1
  --poll-interval  seconds between approval polls (default 5, the service's limit)
  --api-key        run as the agent of this API key (svc_agent_sk_…): keys are generated in the
                   state directory and registered on the first connection
  --plugin-port    port of the local plugin API (default ${DEFAULT_PLUGIN_PORT}; 0 = any free port)
  --plugin-host    address the plugin binds to (default 127.0.0.1; non-loopback clients are refused anyway)
  --no-plugin      do not serve the local plugin API
  --a2a-upstream   the agent's own A2A JSON-RPC endpoint on loopback: A2A calls reaching this agent
                   through Parley are answered from it (env PARLEY_A2A_UPSTREAM; needs the plugin)
  --plugin-url     plugin base URL for status (default: the running plugin's, from the state directory)
  --hub-address    hub-register: the address to register (did:hub:NAME accepted); doctor: the one the
                   MCP tool server is given (default PARLEY_AGENT_ID, else the one hub-register noted)
  --owner-token    hub-register: an owner JWT of the agent's tenant (or PARLEY_OWNER_TOKEN). With an
                   activated device in the state directory its identity is bound to that device; with
                   an empty one a new API-key agent is registered (its key kept sealed there);
                   card publish: read the registered capabilities (descriptions, input schemas)
                   and publish with it (else the agent's own API key or device token)
  --force          card publish: publish even when the stored card is current

keys at rest (every command; the state directory holds the device keys, sessions and undelivered
messages, sealed with XChaCha20-Poly1305 under one of):
  --key-file PATH         a key file: 32 raw bytes or 64 hex characters, mode 0600 (created with
                          32 random bytes when missing and the directory is not sealed yet); env PARLEY_KEY_FILE
  PARLEY_PASSPHRASE       env only: a passphrase, stretched with scrypt (N=2^17, r=8, p=1)
  --insecure-plain-store  keep plain JSON files (0600) instead; env PARLEY_STORE=plain
  A plain state directory is sealed record by record as the agent reads it once a key is given;
  an older copy of a sealed record put back is refused.`;

/** Where the command writes (replaceable in tests). */
export interface CliIo {
  out: (line: string) => void;
  err: (line: string) => void;
  /** Register a handler for SIGINT/SIGTERM; default: process signals. */
  onSignal?: (handler: () => void) => void;
  /** Environment variables read (`PARLEY_REQUIRE_PQ`); default `process.env`. */
  env?: Record<string, string | undefined>;
}

/** Session choices of the agent: MLS on or off, post-quantum required or not. */
interface SessionChoice {
  mls: boolean;
  requirePostQuantum: boolean;
}

/** `--require-pq`, else `PARLEY_REQUIRE_PQ` set to `1` or `true`. */
function requirePqFrom(flag: boolean, env: Record<string, string | undefined>): boolean {
  return flag || ['1', 'true'].includes((env.PARLEY_REQUIRE_PQ ?? '').toLowerCase());
}

const defaultIo: CliIo = {
  out: (line) => console.log(line),
  err: (line) => console.error(line),
  onSignal: (handler) => {
    process.once('SIGINT', handler);
    process.once('SIGTERM', handler);
  },
};

function stamp(line: string): string {
  return `${new Date().toISOString().slice(11, 19)} ${line}`;
}

/** How `run` serves the plugin (undefined: not at all). */
interface PluginChoice {
  host: string;
  port: number;
  /** `--a2a-upstream`: where incoming A2A calls are answered from. */
  a2aUpstream?: string;
}

/** Start the plugin of a running agent; a failure (port in use, …) is reported and the agent keeps running. */
async function servePlugin(backend: PluginBackend, stateDir: string, plugin: PluginChoice | undefined, io: CliIo): Promise<RunningPlugin | undefined> {
  if (!plugin) return undefined;
  try {
    return await startPlugin({ backend, stateDir, host: plugin.host, port: plugin.port, ...(plugin.a2aUpstream ? { a2aUpstream: plugin.a2aUpstream } : {}), log: (l) => io.out(stamp(l)) });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'EADDRINUSE' ? `port ${plugin.port} on ${plugin.host} is in use (another parley-agent?); choose another with --plugin-port` : (err as Error).message;
    io.err(stamp(`warning: the local plugin did not start: ${why}`));
    return undefined;
  }
}

/** The state directory and how it is kept at rest. */
interface StateChoice {
  stateDir: string;
  protection: StoreProtection;
}

/** Run the agent (echo agent of an enrolled device, or an API-key agent) until it ends; returns the process exit status. */
async function runUntilExit(state: StateChoice, e2e: SessionChoice, io: CliIo, plugin: PluginChoice | undefined, apiKey?: { key: string; server: string }): Promise<number> {
  const log = (l: string) => io.out(stamp(l));
  const { stateDir } = state;
  const agent = apiKey ? await startApiKeyAgent({ apiKey: apiKey.key, server: apiKey.server, ...state, requirePostQuantum: e2e.requirePostQuantum, log }) : await startEchoAgent({ ...state, ...e2e, log });
  io.onSignal?.(() => {
    io.out(stamp('stopping…'));
    void agent.stop();
  });
  const served = await servePlugin(agent, stateDir, plugin, io);
  await agent.ready.catch(() => undefined);
  void publishCardIfStale({ ...state, ...(plugin?.port ? { pluginPort: plugin.port } : {}) }, log);
  const exit: AgentExit = await agent.done;
  await served?.close().catch(() => undefined);
  switch (exit.reason) {
    case 'revoked':
      io.out(stamp(`the owner revoked this device (WebSocket closed with ${exit.code ?? 4001}); exiting. Re-enrolling needs a new invite.`));
      return 0;
    case 'stopped':
      io.out(stamp('stopped'));
      return 0;
    default:
      io.err(stamp(`the service refused the connection (${exit.code ?? ''} ${exit.detail ?? exit.reason}); exiting`));
      return 1;
  }
}

/**
 * The command: parse `argv` (without node and script), run, return the exit status.
 * Never throws: errors are printed with a hint.
 */
export async function main(argv: string[], io: CliIo = defaultIo): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        invite: { type: 'string' },
        server: { type: 'string', default: serviceUrlFromEnv(io.env ?? process.env) },
        'state-dir': { type: 'string', default: DEFAULT_AGENT_STATE_DIR },
        name: { type: 'string' },
        'no-mls': { type: 'boolean', default: false },
        'require-pq': { type: 'boolean', default: false },
        'poll-interval': { type: 'string' },
        'api-key': { type: 'string' },
        'plugin-port': { type: 'string' },
        'plugin-host': { type: 'string' },
        'no-plugin': { type: 'boolean', default: false },
        'a2a-upstream': { type: 'string' },
        'plugin-url': { type: 'string' },
        'hub-address': { type: 'string' },
        'owner-token': { type: 'string' },
        'display-name': { type: 'string' },
        description: { type: 'string' },
        capability: { type: 'string', multiple: true },
        force: { type: 'boolean', default: false },
        'key-file': { type: 'string' },
        'insecure-plain-store': { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  } catch (err) {
    io.err(`${(err as Error).message}\n${USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  const command = positionals[0];
  const cardPublish = command === 'card' && positionals[1] === 'publish' && positionals.length === 2;
  if (values.help || command === undefined || (positionals.length > 1 && !cardPublish) || !['enroll', 'run', 'status', 'doctor', 'hub-register', 'card'].includes(command)) {
    (values.help ? io.out : io.err)(USAGE);
    return values.help ? 0 : 2;
  }
  const stateDir = values['state-dir'];
  let protection: StoreProtection;
  try {
    protection = chooseStoreProtection({ ...(values['key-file'] !== undefined ? { keyFile: values['key-file'] } : {}), plain: values['insecure-plain-store'] });
  } catch (err) {
    io.err(`error: ${(err as Error).message}`);
    return 2;
  }
  const env = io.env ?? process.env;
  const e2e: SessionChoice = { mls: !values['no-mls'], requirePostQuantum: requirePqFrom(values['require-pq'], env) };
  const serverGiven = argv.some((a) => a === '--server' || a.startsWith('--server='));
  if (command === 'status') return status({ stateDir, protection, ...(values['plugin-url'] ? { pluginUrl: values['plugin-url'] } : {}) }, io);
  if (command === 'doctor') {
    const hubAddress = values['hub-address'] ?? (env.PARLEY_AGENT_ID || undefined);
    return doctor({ stateDir, protection, ...(serverGiven ? { server: values.server } : {}), ...(values['api-key'] ? { apiKey: values['api-key'] } : {}), ...(hubAddress ? { hubAddress } : {}) }, io);
  }
  if (command === 'card') {
    const ownerToken = values['owner-token'] ?? (env.PARLEY_OWNER_TOKEN || undefined);
    const pluginPort = values['plugin-port'] === undefined ? undefined : Number(values['plugin-port']);
    if (pluginPort !== undefined && (!Number.isInteger(pluginPort) || pluginPort < 1 || pluginPort > 65_535)) {
      io.err('--plugin-port must be a port number (1-65535)');
      return 2;
    }
    const options = { stateDir, protection, force: values.force, ...(serverGiven ? { server: values.server } : {}), ...(ownerToken ? { ownerToken } : {}), ...(pluginPort ? { pluginPort } : {}) };
    return cardPublishCommand(options, io).catch((err: unknown) => {
      io.err(describeFailure(err));
      return 1;
    });
  }
  if (command === 'hub-register') {
    return hubRegisterCommand({ ...values, stateDir, protection, server: serverGiven ? values.server : undefined, env }, io).catch((err: unknown) => {
      io.err(describeFailure(err));
      return 1;
    });
  }
  let plugin: PluginChoice | undefined;
  const a2aGiven = values['a2a-upstream'] ?? (env.PARLEY_A2A_UPSTREAM || undefined);
  let a2aUpstream: string | undefined;
  try {
    a2aUpstream = a2aGiven === undefined ? undefined : checkA2aUpstream(a2aGiven);
  } catch (err) {
    io.err((err as Error).message);
    return 2;
  }
  if (a2aUpstream && values['no-plugin']) {
    io.err('--a2a-upstream is served by the local plugin: drop --no-plugin');
    return 2;
  }
  if (!values['no-plugin']) {
    const port = values['plugin-port'] === undefined ? DEFAULT_PLUGIN_PORT : Number(values['plugin-port']);
    if (!Number.isInteger(port) || port < 0 || port > 65_535) {
      io.err('--plugin-port must be a port number (0-65535; 0 picks a free one)');
      return 2;
    }
    const host = values['plugin-host'] ?? '127.0.0.1';
    if (!isLoopbackHost(host)) io.err(stamp(`warning: the plugin binds to ${host} as asked; it still refuses every non-loopback client (403)`));
    plugin = { host, port, ...(a2aUpstream ? { a2aUpstream } : {}) };
  }
  try {
    if (command === 'run') {
      // An API-key agent: --api-key, or the key saved in the state directory by an earlier run.
      let apiKey = values['api-key'];
      let server = values.server;
      if (apiKey === undefined) {
        const saved = await openStateStore(stateDir, protection)
          .then(loadApiKeyRecord)
          .catch(() => undefined);
        if (saved) {
          apiKey = saved.api_key;
          if (!serverGiven) server = saved.server;
        }
      }
      if (apiKey !== undefined) return await runUntilExit({ stateDir, protection }, e2e, io, plugin, { key: apiKey, server });
    }
    if (command === 'enroll') {
      if (!values.invite) {
        io.err(`enroll needs --invite svc_tok_…\n${USAGE}`);
        return 2;
      }
      let pollIntervalMs: number | undefined;
      if (values['poll-interval'] !== undefined) {
        const s = Number(values['poll-interval']);
        if (!Number.isFinite(s) || s < 5) {
          io.err('--poll-interval must be a number of seconds, at least 5 (the service allows one status request per 5 s)');
          return 2;
        }
        pollIntervalMs = s * 1000;
      }
      await enrollAgentDevice({
        server: values.server,
        invite: values.invite,
        stateDir,
        protection,
        ...(values.name !== undefined ? { name: values.name } : {}),
        ...(pollIntervalMs !== undefined ? { pollIntervalMs } : {}),
        log: (l) => io.out(stamp(l)),
      });
    }
    return await runUntilExit({ stateDir, protection }, e2e, io, plugin);
  } catch (err) {
    io.err(describeFailure(err));
    return 1;
  }
}

/** A one-line explanation of a failure, with what to do. */
export function describeFailure(err: unknown): string {
  if (err instanceof AgentStateError || err instanceof SealedStoreError) return `error: ${err.message}`;
  if (err instanceof EnrollmentRejectedError) return 'error: the owner rejected (or revoked) this device; enrolling again needs a new invite';
  if (err instanceof EnrollmentTimeoutError) return `error: ${err.message}`;
  if (err instanceof ParleyApiError) {
    if (err.status === 401 && err.path.endsWith('/enroll')) return 'error: the invite is unknown, already used, revoked or expired (invites are single use and last 10 minutes); ask the owner for a new one';
    if (err.status === 429) return `error: rate limited by the service; retry in ${Math.ceil((err.retryAfterMs ?? 60_000) / 1000)} s`;
    return `error: the service answered ${err.status} to ${err.method} ${err.path}: ${err.detail}`;
  }
  if (err instanceof ParleyNetworkError) return `error: cannot reach the service (${err.message}); check --server`;
  return `error: ${(err as Error)?.stack ?? String(err)}`;
}

runIfMain(import.meta.url, 'parley-agent', (argv) => main(argv));

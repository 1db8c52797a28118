/**
 * `parley-agent hub-register`: give the agent of a state directory a hub identity (its
 * platform-wide address and `did:hub` DID, which the MCP tool server names as `PARLEY_AGENT_ID`)
 * from what the directory holds, with an owner token; no key is made or typed by hand.
 *
 * - The directory holds an activated device (an enrolled device, or an API-key agent whose first
 *   connection registered its keys): `POST /api/v1/hub/register` binds the new identity to that
 *   device, with the device's Ed25519 identity key as the identity's owner key (`#owner-key` of
 *   the DID document).
 * - The directory is empty: `POST /api/v1/hub/agents` creates the identity and a new API key of
 *   the owner's tenant in one transaction; the key is saved sealed in the directory (the record
 *   `parley-agent run` resumes), and the agent's first connection binds the identity to its
 *   device (docs/decisions.md "Agent self-registration").
 *
 * Either way the address is noted in `<state dir>/hub-identity.json` (plain: the address and DID
 * are public, and a running agent is the only writer of its sealed records), which `parley-agent
 * doctor` reads. The command prints the MCP tool server's environment for this agent as
 * `export NAME='value'` lines on stdout (`eval "$(…)"` applies them), everything else on stderr.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { HUB_ADDRESS_PATTERN } from '@parley/protocol';
import { ParleyApiError } from '../client/errors.js';
import { ParleyClient, type FetchLike } from '../client/rest.js';
import { bytesToBase64 } from '../crypto/primitives.js';
import { publicKeyMultibase } from '../did/update.js';
import { AgentStateError, loadAgentState } from './agent.js';
import { writeFileAtomic } from './plugin.js';
import { API_AGENT_KEY, loadApiKeyRecord, type ApiKeyAgentRecord } from './runtime.js';
import { openStateStore, type StoreProtection } from './state-store.js';

/** File of the {@link HubIdentityNote} in a state directory. */
export const HUB_IDENTITY_FILE = 'hub-identity.json';

/** What `hub-register` notes in the state directory (public information only). */
export interface HubIdentityNote {
  v: 1;
  /** Lower-case hub address. */
  hub_address: string;
  /** `did:hub:<hub_address>`. */
  did: string;
  /** Service base URL the identity was registered with. */
  server: string;
  /** The bound device, or null while an API-key agent has not connected yet. */
  device_id: string | null;
  registered_at: string;
}

const ADDRESS = new RegExp(HUB_ADDRESS_PATTERN);

/**
 * `my-agent` or `did:hub:my-agent` (any case) → `my-agent`.
 * @throws AgentStateError when it is not a hub address (3-32 of a-z, 0-9, "-", no "-" at either end).
 */
export function hubAddressFrom(value: string): string {
  const v = value.trim();
  const address = (v.toLowerCase().startsWith('did:hub:') ? v.slice('did:hub:'.length) : v).toLowerCase();
  if (!ADDRESS.test(address)) throw new AgentStateError(`"${value}" is not a hub address: 3-32 characters of a-z, 0-9 and "-", not starting or ending with "-" (did:hub:… accepted)`);
  return address;
}

/** The note of `stateDir`, or undefined when there is none (or it is not one). */
export async function readHubIdentityNote(stateDir: string): Promise<HubIdentityNote | undefined> {
  try {
    const note = JSON.parse(await readFile(path.join(stateDir, HUB_IDENTITY_FILE), 'utf8')) as HubIdentityNote;
    return note?.v === 1 && typeof note.hub_address === 'string' && ADDRESS.test(note.hub_address) ? note : undefined;
  } catch {
    return undefined;
  }
}

/** Options of {@link registerHubIdentity}. */
export interface HubRegisterOptions {
  stateDir: string;
  protection: StoreProtection;
  /** An owner JWT of the agent's tenant. */
  ownerToken: string;
  /** The address to register (`did:hub:` accepted). */
  hubAddress: string;
  /** Service base URL: default the one the directory holds, else `http://127.0.0.1:8080`. */
  server?: string;
  /** 1-100 characters (default: the address). */
  displayName?: string;
  description?: string;
  /** Capability names the identity announces. */
  capabilities?: string[];
  fetch?: FetchLike;
}

/** The outcome of {@link registerHubIdentity}. */
export interface HubRegistration {
  /**
   * `bound`: an existing device was bound; `created`: a new API-key agent waits for its first run;
   * `unchanged`: this state directory had registered this address already (a repeated command).
   */
  mode: 'bound' | 'created' | 'unchanged';
  hubAddress: string;
  did: string;
  server: string;
  /** Absolute state directory. */
  stateDir: string;
  deviceId: string | null;
  /** The agent's API key, when it is an API-key agent (a secret). */
  apiKey: string | undefined;
}

/** The default service base URL. */
const DEFAULT_SERVER = 'http://127.0.0.1:8080';

/**
 * Register the hub identity of the state directory's agent (see the file comment).
 * @throws AgentStateError when the directory holds keys but no activated device yet (an API-key
 *   agent that never connected, an enrollment not approved yet), or the owner token is refused;
 *   ParleyApiError for the service's other refusals (409 address taken or device already bound,
 *   404 device not in the token's tenant, …); SealedStoreError (no or wrong key).
 */
export async function registerHubIdentity(options: HubRegisterOptions): Promise<HubRegistration> {
  const address = hubAddressFrom(options.hubAddress);
  const store = await openStateStore(options.stateDir, options.protection);
  const { identity, record } = await loadAgentState(store);
  const keyRecord = await loadApiKeyRecord(store);
  const server = (options.server ?? record?.server ?? keyRecord?.server ?? DEFAULT_SERVER).replace(/\/+$/, '');
  const client = new ParleyClient({ baseUrl: server, ownerToken: options.ownerToken, ...(options.fetch ? { fetch: options.fetch } : {}) });
  const displayName = options.displayName ?? address;
  const described = options.description !== undefined ? { description: options.description } : {};
  const stateDir = path.resolve(options.stateDir);
  let result: HubRegistration;
  const note = await readHubIdentityNote(options.stateDir);
  if (note?.hub_address === address && note.server === server && (await stillRegistered(client, address, identity?.identityPublicKey, keyRecord))) {
    return { mode: 'unchanged', hubAddress: address, did: note.did, server, stateDir, deviceId: record?.device_id ?? keyRecord?.device_id ?? null, apiKey: keyRecord?.api_key };
  }
  if (!identity && !record && !keyRecord) {
    const created = await ownerCall(() => client.registerAgent({ name: address, display_name: displayName, ...described, ...(options.capabilities?.length ? { skills: options.capabilities } : {}) }));
    const saved: ApiKeyAgentRecord = { v: 1, server, api_key: created.api_key };
    await store.save(API_AGENT_KEY, JSON.stringify(saved));
    result = { mode: 'created', hubAddress: created.hub_address, did: created.did, server, stateDir, deviceId: null, apiKey: created.api_key };
  } else {
    const deviceId = record?.status === 'ACTIVE' ? record.device_id : keyRecord?.device_id;
    if (!identity || !deviceId) {
      const start = keyRecord ? `start the agent once (parley-agent run --state-dir ${stateDir}) so its first connection registers its keys` : `finish the enrollment first (parley-agent enroll --state-dir ${stateDir} waits for the owner's approval)`;
      throw new AgentStateError(`${stateDir} has no activated device to bind yet: ${start}, then run hub-register again`);
    }
    const registered = await ownerCall(() =>
      client.registerHub({ hub_address: address, display_name: displayName, ...described, ...(options.capabilities?.length ? { capabilities: options.capabilities } : {}), device_id: deviceId, public_key: bytesToBase64(identity.identityPublicKey) }),
    );
    result = { mode: 'bound', hubAddress: registered.hub_address, did: registered.did, server, stateDir, deviceId, apiKey: keyRecord?.api_key };
  }
  const written: HubIdentityNote = { v: 1, hub_address: result.hubAddress, did: result.did, server, device_id: result.deviceId, registered_at: new Date().toISOString() };
  await writeFileAtomic(path.join(options.stateDir, HUB_IDENTITY_FILE), `${JSON.stringify(written)}\n`);
  return result;
}

/**
 * Whether `address` (noted by an earlier `hub-register` of this directory) is still this agent's
 * at the service: its DID document's owner key is this agent's identity key, or it has none yet
 * and the agent is an API-key agent not connected yet (the identity waits for its first run).
 */
async function stillRegistered(client: ParleyClient, address: string, identityKey: Uint8Array | undefined, keyRecord: ApiKeyAgentRecord | undefined): Promise<boolean> {
  const ownerKey = await ownerKeyOf(client, address);
  if (ownerKey === null) return false;
  if (ownerKey === undefined) return keyRecord !== undefined && keyRecord.device_id === undefined;
  return identityKey !== undefined && ownerKey === publicKeyMultibase(identityKey);
}

/**
 * The `#owner-key` of `address`'s DID document (`GET /api/v1/hub/{address}/did`, public) as
 * `publicKeyMultibase`: undefined when the document has none (an identity waiting for its
 * agent's first connection), null when the address is not registered (404).
 * @throws ParleyApiError / ParleyNetworkError for other failures
 */
export async function ownerKeyOf(client: ParleyClient, address: string): Promise<string | undefined | null> {
  try {
    const doc = await client.getDidDocument(address);
    return doc.verificationMethod?.find((m) => m.id.endsWith('#owner-key'))?.publicKeyMultibase;
  } catch (err) {
    if (err instanceof ParleyApiError && err.status === 404) return null;
    throw err;
  }
}

/** Run an owner call; a refused owner token becomes an {@link AgentStateError} saying how to get one. */
async function ownerCall<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (err instanceof ParleyApiError && err.status === 401) {
      throw new AgentStateError(`the service refused the owner token (${err.detail}): give a fresh one of the agent's tenant with --owner-token or PARLEY_OWNER_TOKEN (from the repository, for the development sign-in: npm run -s cli -- owner-token --sub you@example.com)`);
    }
    throw err;
  }
}

/** Single-quote a value for a POSIX shell. */
function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/**
 * The MCP tool server's environment for a registration, as `export NAME='value'` lines:
 * `PARLEY_ENDPOINT`, `PARLEY_AGENT_ID`, `PARLEY_STATE_DIR` and, for an API-key agent, `PARLEY_API_KEY`.
 */
export function mcpEnvironmentLines(r: HubRegistration): string[] {
  const env: [string, string][] = [
    ['PARLEY_ENDPOINT', r.server],
    ['PARLEY_AGENT_ID', r.did],
    ['PARLEY_STATE_DIR', r.stateDir],
  ];
  if (r.apiKey !== undefined) env.push(['PARLEY_API_KEY', r.apiKey]);
  return env.map(([k, v]) => `export ${k}=${shellQuote(v)}`);
}

/** Where {@link hubRegisterCommand} writes: `out` the export lines (stdout), `err` the rest. */
export interface HubRegisterIo {
  out: (line: string) => void;
  err: (line: string) => void;
}

/** The command line of `hub-register` as `parley-agent` parsed it (flag names as given). */
export interface HubRegisterFlags {
  stateDir: string;
  protection: StoreProtection;
  /** `--server`, when given (else the state directory's, else the default). */
  server: string | undefined;
  'hub-address'?: string | undefined;
  'owner-token'?: string | undefined;
  'display-name'?: string | undefined;
  description?: string | undefined;
  capability?: string[] | undefined;
  /** Read for `PARLEY_OWNER_TOKEN`. */
  env: Record<string, string | undefined>;
}

/**
 * The `hub-register` command: check the flags, register, then print what happened (stderr) and
 * the MCP environment (stdout). Errors of the registration are thrown (the CLI prints them with
 * their fix).
 * @returns 0, or 2 when `--hub-address` or the owner token is missing
 */
export async function hubRegisterCommand(flags: HubRegisterFlags, io: HubRegisterIo): Promise<number> {
  const ownerToken = flags['owner-token'] ?? (flags.env.PARLEY_OWNER_TOKEN || undefined);
  if (!flags['hub-address'] || !ownerToken) {
    io.err('hub-register needs --hub-address NAME and an owner JWT of the agent\'s tenant: --owner-token JWT or PARLEY_OWNER_TOKEN (from the repository, for the development sign-in: npm run -s cli -- owner-token --sub you@example.com)');
    return 2;
  }
  const r = await registerHubIdentity({
    stateDir: flags.stateDir,
    protection: flags.protection,
    ownerToken,
    hubAddress: flags['hub-address'],
    ...(flags.server !== undefined ? { server: flags.server } : {}),
    ...(flags['display-name'] !== undefined ? { displayName: flags['display-name'] } : {}),
    ...(flags.description !== undefined ? { description: flags.description } : {}),
    capabilities: flags.capability ?? [],
  });
  if (r.mode === 'unchanged') {
    io.err(`${r.did} is already registered for the agent of ${r.stateDir}`);
  } else if (r.mode === 'created') {
    io.err(`registered ${r.did} with a new API key, kept sealed in ${r.stateDir}; the agent's first run (parley-agent run --state-dir ${r.stateDir}) binds the identity to its device`);
  } else {
    io.err(`registered ${r.did}, bound to device ${r.deviceId} (its identity key is the owner key)`);
  }
  if (r.apiKey === undefined) io.err("the MCP tool server also needs the device's credentials: PARLEY_PRIVATE_KEY and PARLEY_DEVICE_ID, or run an API-key agent");
  io.err('the MCP tool server\'s environment for this agent follows (apply it with eval "$(…)"); the API key is a secret');
  for (const line of mcpEnvironmentLines(r)) io.out(line);
  return 0;
}

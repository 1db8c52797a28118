/**
 * `parley-agent card publish`, and the check `run` makes at start: build the agent's A2A Agent
 * Card from its hub identity (public profile; the registered capabilities with their descriptions
 * and input schemas when an owner token is at hand), sign it with the agent's identity key under
 * its verification method in the `did:hub` document, and publish it (`PUT
 * /api/v1/hub/{address}/agent-card`) unless the stored card already says the same, signed by a
 * key the document still lists. The identity key never leaves the state directory.
 *
 * Credentials: an owner token when given, else the API key, else the device token of the state
 * directory.
 */
import { ParleyApiError } from '../client/errors.js';
import { ParleyClient, type FetchLike } from '../client/rest.js';
import { buildAgentCard, DEFAULT_PLUGIN_PORT, type AgentCardCapability, type AgentCardJson } from '../a2a-card/build.js';
import { jcs, signAgentCard } from '../a2a-card/sign.js';
import { verifyAgentCard, type CardDidResolution } from '../a2a-card/verify.js';
import { publicKeyMultibase } from '../did/update.js';
import { unsignedCard } from '@parley/protocol';
import { AgentStateError, loadAgentState } from './agent.js';
import { readHubIdentityNote } from './hub-register.js';
import { loadApiKeyRecord } from './runtime.js';
import { openStateStore, type StoreProtection } from './state-store.js';

/** Options of {@link publishAgentCard}. */
export interface PublishCardOptions {
  stateDir: string;
  protection: StoreProtection;
  /** Service base URL (default: the one `hub-register` noted). */
  server?: string;
  /** An owner JWT of the agent's tenant: reads the registered capabilities, and publishes with it. */
  ownerToken?: string;
  /** Port of the local plugin named in the card (default 18790). */
  pluginPort?: number;
  /** Publish even when the stored card is current. */
  force?: boolean;
  fetch?: FetchLike;
}

/** What {@link publishAgentCard} did: `published`, or `unchanged` (the stored card is current). */
export interface CardPublishResult {
  outcome: 'published' | 'unchanged';
  hubAddress: string;
  /** The DID URL of the signing key. */
  kid: string;
  card: AgentCardJson;
}

/** Whether `stateDir` has a hub identity noted by `hub-register` (`run` publishes only then). */
export const hasHubIdentity = async (stateDir: string): Promise<boolean> => (await readHubIdentityNote(stateDir)) !== undefined;

/**
 * Build, sign and publish the agent's card when the stored one differs (see the file comment).
 * @throws AgentStateError when the directory has no hub identity, no keys, no credential, or its
 *   key is not in the DID document; ParleyApiError for the service's refusals.
 */
export async function publishAgentCard(options: PublishCardOptions): Promise<CardPublishResult> {
  const note = await readHubIdentityNote(options.stateDir);
  if (!note) throw new AgentStateError(`${options.stateDir} has no hub identity: give it one with parley-agent hub-register first`);
  const store = await openStateStore(options.stateDir, options.protection);
  const { identity, record } = await loadAgentState(store);
  const keyRecord = await loadApiKeyRecord(store);
  if (!identity) throw new AgentStateError(`${options.stateDir} holds no keys yet: run the agent once so it registers them`);
  const server = (options.server ?? note.server).replace(/\/+$/, '');
  const f = options.fetch ? { fetch: options.fetch } : {};
  const credential = options.ownerToken
    ? { ownerToken: options.ownerToken }
    : keyRecord
      ? { apiKey: keyRecord.api_key }
      : record?.device_jwt
        ? { deviceToken: record.device_jwt }
        : undefined;
  if (!credential) throw new AgentStateError(`${options.stateDir} has no credential to publish with: give an owner token (--owner-token or PARLEY_OWNER_TOKEN)`);
  const client = new ParleyClient({ baseUrl: server, ...credential, ...f });
  const publicClient = new ParleyClient({ baseUrl: server, ...f });
  const address = note.hub_address;

  const doc = (await publicClient.getDidDocument(address)) as unknown as NonNullable<CardDidResolution['didDocument']>;
  const mine = publicKeyMultibase(identity.identityPublicKey);
  const method = doc.verificationMethod?.find((m) => m.publicKeyMultibase === mine);
  if (!method) throw new AgentStateError(`this agent's identity key is not a verification method of did:hub:${address}; add it to the DID document first`);

  const profile = await publicClient.getHubProfile(address);
  let capabilities: (string | AgentCardCapability)[] = profile.capabilities;
  if (options.ownerToken) {
    const { capabilities: registered } = await client.listHubCapabilities(address);
    capabilities = [...registered.map((c) => ({ name: c.name, description: c.description, input_schema: c.input_schema as Record<string, unknown> })), ...profile.capabilities];
  }
  const card = buildAgentCard({ hubAddress: address, displayName: profile.display_name, description: profile.description, capabilities, pluginPort: options.pluginPort ?? DEFAULT_PLUGIN_PORT });

  if (!options.force) {
    const stored = await storedCard(publicClient, address);
    const resolveDid = async (): Promise<CardDidResolution> => ({ didDocument: doc });
    if (stored && jcs(unsignedCard(stored)) === jcs(card) && (await verifyAgentCard(stored, { expectedAddress: address, resolveDid })).ok) {
      return { outcome: 'unchanged', hubAddress: address, kid: method.id, card: stored as AgentCardJson };
    }
  }
  const signed = signAgentCard(card, { kid: method.id, sign: (m) => identity.sign(m) });
  await client.publishAgentCard(address, signed);
  return { outcome: 'published', hubAddress: address, kid: method.id, card: signed };
}

/** The stored card, or undefined when none is published (404). */
async function storedCard(client: ParleyClient, address: string): Promise<Record<string, unknown> | undefined> {
  try {
    return (await client.getAgentCard(address)) as Record<string, unknown>;
  } catch (err) {
    if (err instanceof ParleyApiError && err.status === 404) return undefined;
    throw err;
  }
}

/** Where the card commands write: `out` results, `err` errors and hints. */
export interface CardIo {
  out: (line: string) => void;
  err: (line: string) => void;
}

/**
 * `parley-agent card publish`: publish (or confirm current) the agent's card and say which.
 * @returns 0; errors are thrown (the CLI prints them with their fix)
 */
export async function cardPublishCommand(options: PublishCardOptions, io: CardIo): Promise<number> {
  const r = await publishAgentCard(options);
  io.out(r.outcome === 'published' ? `published the Agent Card of did:hub:${r.hubAddress}, signed by ${r.kid}` : `the Agent Card of did:hub:${r.hubAddress} is current (signed by ${r.kid}); --force publishes it again`);
  return 0;
}

/**
 * At `run`: publish the card when the agent has a hub identity and the stored card is stale.
 * Never throws: a failure is logged as a warning and the agent keeps running.
 */
export async function publishCardIfStale(options: PublishCardOptions, log: (line: string) => void): Promise<CardPublishResult | undefined> {
  if (!(await hasHubIdentity(options.stateDir))) return undefined;
  try {
    const r = await publishAgentCard(options);
    if (r.outcome === 'published') log(`published the Agent Card of did:hub:${r.hubAddress} (it was missing or stale)`);
    return r;
  } catch (err) {
    const why = err instanceof ParleyApiError ? `${err.status} ${err.detail}` : (err as Error).message;
    log(`warning: the Agent Card was not published: ${why} (retry with parley-agent card publish)`);
    return undefined;
  }
}

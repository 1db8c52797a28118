/**
 * The hub identity check of `parley-agent doctor` (diagnostics.ts): the MCP tool server names the
 * agent by its hub address (`PARLEY_AGENT_ID=did:hub:<address>`), which must be registered at the
 * service and bound to this agent; `parley-agent hub-register` (hub-register.ts) registers it.
 */
import path from 'node:path';
import type { ParleyClient } from '../client/rest.js';
import { publicKeyMultibase } from '../did/update.js';
import { hubAddressFrom, ownerKeyOf, readHubIdentityNote } from './hub-register.js';

/** One line of `parley-agent doctor`: passed, or failed with its fix. */
export type DoctorCheck = { ok: string } | { fail: string; fix: string };

/** Inputs of {@link checkHubIdentity}: where the hub address may come from, most binding first. */
export interface HubCheckInput {
  stateDir: string;
  /** `--hub-address`, else `PARLEY_AGENT_ID` (what the MCP tool server is told). */
  given: string | undefined;
  /** The running plugin's own hub address (known once it had a channel), if any. */
  fromPlugin: string | null | undefined;
  /** The service, when it answered; undefined skips the registration check. */
  client: ParleyClient | undefined;
  /** This agent's Ed25519 identity public key, when its state is readable. */
  identityKey: Uint8Array | undefined;
  /** The command that fixes a missing identity. */
  registerHint: string;
}

/**
 * The hub identity check of `parley-agent doctor`: the MCP tool server needs the agent's hub
 * address (`PARLEY_AGENT_ID=did:hub:<address>`), registered at the service and bound to this
 * agent. The address is `given`, else the note of `hub-register`, else the running plugin's. The
 * DID document (`GET /api/v1/hub/{address}/did`, public) tells whether its `#owner-key` is this
 * agent's identity key (bound by `hub-register` or by the first connection of an agent registered
 * with its API key) or missing (an API-key agent not bound yet).
 */
export async function checkHubIdentity(input: HubCheckInput): Promise<DoctorCheck> {
  const note = await readHubIdentityNote(input.stateDir);
  const register = `register it: ${input.registerHint}, then give the MCP tool server PARLEY_AGENT_ID=did:hub:<address>`;
  let address: string;
  try {
    const raw = input.given ?? note?.hub_address ?? input.fromPlugin ?? undefined;
    if (raw === undefined || raw.trim() === '') return { fail: 'no hub address for this agent: the MCP tool server needs PARLEY_AGENT_ID=did:hub:<address>', fix: register };
    address = hubAddressFrom(raw);
  } catch (err) {
    return { fail: `PARLEY_AGENT_ID / --hub-address: ${(err as Error).message}`, fix: 'give did:hub:<address> of this agent' };
  }
  if (note && note.hub_address !== address) {
    return { fail: `the hub address given (did:hub:${address}) is not the one registered for this state directory (${note.did})`, fix: `export PARLEY_AGENT_ID=${note.did}` };
  }
  if (!input.client) return { ok: `hub address did:hub:${address} (not checked: the service did not answer)` };
  let ownerKey: string | undefined | null;
  try {
    ownerKey = await ownerKeyOf(input.client, address);
  } catch (err) {
    return { fail: `checking did:hub:${address} failed: ${(err as Error).message}`, fix: 'retry; check the service' };
  }
  if (ownerKey === null) return { fail: `did:hub:${address} is not registered at ${input.client.baseUrl}`, fix: register };
  if (ownerKey === undefined) return { fail: `did:hub:${address} is registered but not bound to a device yet`, fix: `start the agent once (parley-agent run --state-dir ${path.resolve(input.stateDir)}): its first connection binds it` };
  const mine = input.identityKey !== undefined && ownerKey === publicKeyMultibase(input.identityKey);
  return { ok: `hub identity did:hub:${address} registered${mine ? ", its owner key is this agent's identity key" : " (its owner key is another key than this agent's identity key)"}` };
}

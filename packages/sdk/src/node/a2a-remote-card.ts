/**
 * `GET {plugin}/a2a/{hub_address}/.well-known/agent-card.json` (A2A 1.0 "Agent Discovery": the
 * well-known card path under the agent's base URL): the remote agent's Agent Card.
 *
 * - The stored signed card (`GET /api/v1/hub/{hub_address}/agent-card`) is verified first
 *   (`verifyAgentCard`: JWS over the RFC 8785 canonical card against the `did:hub` document); a
 *   card that does not verify is refused (502 `{detail}` naming the reason), never served.
 * - An identity without a stored card (404) is served a card built from its public profile
 *   (`GET /api/v1/hub/{hub_address}/profile`), unsigned.
 * - The interface URL names this plugin (`{plugin}/a2a/{hub_address}`), so a client built from the
 *   card (`ClientFactory.createFromUrl`) calls through this plugin whatever port it listens on.
 *   When that differs from the URL the card was signed with, the signatures no longer cover it
 *   and are dropped: this plugin has verified them already.
 */
import { ParleyApiError } from '../client/errors.js';
import { ParleyClient } from '../client/rest.js';
import { buildAgentCard, hubCardVerifierOptions, verifyAgentCard, type AgentCardJson } from '../a2a-card/index.js';
import { A2aParleyError } from './a2a-errors.js';

/** A failure answering the card route: HTTP status and detail. */
export class RemoteCardError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The verified card of `hubAddress`, pointed at `endpoint` (see the file comment).
 * @throws RemoteCardError 404 unknown identity, 502 card signature invalid or the service failed.
 */
export async function remoteAgentCard(server: string, hubAddress: string, endpoint: string, fetchImpl: typeof fetch = fetch): Promise<AgentCardJson> {
  const client = new ParleyClient({ baseUrl: server });
  const res = await fetchImpl(`${server.replace(/\/+$/, '')}/api/v1/hub/${encodeURIComponent(hubAddress)}/agent-card`, { headers: { accept: 'application/json' } });
  let card: AgentCardJson;
  if (res.ok) {
    card = (await res.json()) as AgentCardJson;
    const verdict = await verifyAgentCard(card, { expectedAddress: hubAddress, ...hubCardVerifierOptions(client) });
    if (!verdict.ok) throw new RemoteCardError(502, `card signature invalid (${verdict.reason}): ${verdict.detail}`);
  } else if (res.status === 404) {
    let profile;
    try {
      profile = await client.getHubProfile(hubAddress);
    } catch (err) {
      if (err instanceof ParleyApiError && err.status === 404) throw new RemoteCardError(404, `no hub identity ${hubAddress}`);
      throw new RemoteCardError(502, `reading the profile of ${hubAddress} failed: ${(err as Error).message}`);
    }
    card = buildAgentCard({ hubAddress, displayName: profile.display_name, description: profile.description, capabilities: profile.capabilities });
  } else {
    throw new RemoteCardError(502, `the service answered ${res.status} for the card of ${hubAddress}`);
  }
  const pointed = card.supportedInterfaces.map((i) => (i.protocolBinding === 'JSONRPC' ? { ...i, url: endpoint } : i));
  if (pointed.every((i, n) => i.url === card.supportedInterfaces[n]!.url)) return card;
  const { signatures: _dropped, ...rest } = card;
  return { ...rest, supportedInterfaces: pointed };
}

/**
 * Before a call: the remote identity's stored card must verify (a tampered or re-signed card
 * stops the call). Verdicts are kept `ttlMs` (default 60000) per address; identities without a
 * stored card pass, and so do failures to read it (the call itself then reports the service).
 * Returns a function answering the refusal, or undefined to go ahead.
 */
export function cardGate(server: string, ttlMs = 60_000): (hubAddress: string) => Promise<A2aParleyError | undefined> {
  const verdicts = new Map<string, { at: number; refusal: A2aParleyError | undefined }>();
  return async (hubAddress) => {
    const known = verdicts.get(hubAddress);
    if (known && Date.now() - known.at < ttlMs) return known.refusal;
    let refusal: A2aParleyError | undefined;
    try {
      await remoteAgentCard(server, hubAddress, '');
    } catch (err) {
      if (err instanceof RemoteCardError && err.message.startsWith('card signature invalid')) refusal = new A2aParleyError('card_signature_invalid', `the Agent Card of ${hubAddress} is refused: ${err.message}`);
      else return undefined;
    }
    verdicts.set(hubAddress, { at: Date.now(), refusal });
    return refusal;
  };
}

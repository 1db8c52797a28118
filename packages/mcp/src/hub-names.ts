/**
 * Hub names (design §8.13): an address (`research-bot`, any case) or its DID (`did:hub:research-bot`),
 * normalised by the SDK's `normalizeHubAddress` and checked against the contract's
 * `HUB_ADDRESS_PATTERN`.
 */
import { HUB_ADDRESS_PATTERN, normalizeHubAddress } from '@parley/sdk';

const ADDRESS = new RegExp(HUB_ADDRESS_PATTERN);

/** The lowercase address of a hub name or `did:hub:` DID, or undefined when it is neither. */
export function hubAddress(nameOrDid: string): string | undefined {
  const address = normalizeHubAddress(nameOrDid);
  return ADDRESS.test(address) ? address : undefined;
}

/** `did:hub:<address>`. */
export const didOf = (address: string) => `did:hub:${address}`;

/** Hub addresses (contract §2.8, design §8.13): 3-32 of a-z, 0-9 and "-", stored lowercase; their DIDs. */
import { HUB_ADDRESS_PATTERN } from '@parley/protocol';

const HUB_ADDRESS_RE = new RegExp(HUB_ADDRESS_PATTERN);

/** The stored (lowercase) form of a hub address, or null when it breaks design §8.13. */
export function normalizeHubAddress(address: string): string | null {
  return HUB_ADDRESS_RE.test(address) ? address.toLowerCase() : null;
}

/** `did:hub:<address>` (contract §2.8). */
export const hubDid = (address: string) => `did:hub:${address}`;

/**
 * Protocol choice for a new session (contract §1.3): MLS (RFC 9420) is the primary protocol; X3DH plus
 * Double Ratchet is the fallback, used only when one end cannot speak MLS.
 */
export type SessionProtocol = 'mls' | 'x3dh-dr';

export function selectProtocol(localSupportsMls: boolean, peerSupportsMls: boolean): SessionProtocol {
  return localSupportsMls && peerSupportsMls ? 'mls' : 'x3dh-dr';
}

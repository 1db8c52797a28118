/**
 * The MLS ciphersuites Parley speaks (contract §1.3, design §8.34) and how a group picks one.
 *
 * - {@link MLS_CIPHERSUITE}: MLS_128_DHKEMX25519_CHACHA20POLY1305_SHA256_Ed25519 (RFC 9420 suite 3),
 *   what every client speaks.
 * - {@link MLS_HYBRID_CIPHERSUITE}: MLS_256_XWING_CHACHA20POLY1305_SHA512_Ed25519 (suite 84 in the
 *   `ts-mls` version in use): HPKE with the X-Wing KEM (X25519 + ML-KEM-768,
 *   draft-connolly-cfrg-xwing-kem), ChaCha20-Poly1305, SHA-512, Ed25519. The signature scheme is
 *   the same, so a device's identity key signs in both. ts-mls loads X-Wing from
 *   `@hpke/hybridkem-x-wing` (an SDK dependency).
 *
 * A KeyPackage belongs to one suite, and so does a group, for its whole life. A device offers a
 * suite by publishing KeyPackages of it (the service labels them, `cipher_suite`); a group uses the
 * hybrid suite when its creator and every initial member offer it, the classical one otherwise
 * ({@link chooseCiphersuite}).
 */
import { ciphersuites, getCiphersuiteFromName, getCiphersuiteImpl, type CiphersuiteImpl, type CiphersuiteName, type CryptoProvider } from 'ts-mls';

/** The classical suite (RFC 9420 suite 3). */
export const MLS_CIPHERSUITE: CiphersuiteName = 'MLS_128_DHKEMX25519_CHACHA20POLY1305_SHA256_Ed25519';
/** The hybrid post-quantum suite: X-Wing (X25519 + ML-KEM-768) HPKE, ChaCha20-Poly1305, SHA-512, Ed25519. */
export const MLS_HYBRID_CIPHERSUITE: CiphersuiteName = 'MLS_256_XWING_CHACHA20POLY1305_SHA512_Ed25519';
/** The suites this SDK can run, most preferred first. */
export const MLS_SUPPORTED_CIPHERSUITES: readonly CiphersuiteName[] = [MLS_HYBRID_CIPHERSUITE, MLS_CIPHERSUITE];

/** The registry number of a suite (3 for the classical, 84 for the hybrid one), as the service labels KeyPackages. */
export function ciphersuiteId(name: CiphersuiteName): number {
  return ciphersuites[name];
}

/** The suite of a registry number, if this SDK supports it. */
export function ciphersuiteOfId(id: number): CiphersuiteName | undefined {
  return MLS_SUPPORTED_CIPHERSUITES.find((name) => ciphersuites[name] === id);
}

/**
 * The suite for a new group: the hybrid one when this device and every initial member offer it
 * ("hybrid preferred when both support it"), else the classical one.
 * @param local the suites this device runs.
 * @param members for each initial member, the suites it offers (KeyPackages it published).
 */
export function chooseCiphersuite(local: readonly CiphersuiteName[], members: readonly (readonly CiphersuiteName[])[]): CiphersuiteName {
  const everyone = [local, ...members];
  return everyone.every((offers) => offers.includes(MLS_HYBRID_CIPHERSUITE)) ? MLS_HYBRID_CIPHERSUITE : MLS_CIPHERSUITE;
}

const impls = new Map<CryptoProvider, Map<CiphersuiteName, Promise<CiphersuiteImpl>>>();

/** ts-mls's implementation of `name` through `provider`, made once per provider and suite. */
export function ciphersuiteImpl(provider: CryptoProvider, name: CiphersuiteName = MLS_CIPHERSUITE): Promise<CiphersuiteImpl> {
  let byName = impls.get(provider);
  if (byName === undefined) {
    byName = new Map();
    impls.set(provider, byName);
  }
  let p = byName.get(name);
  if (p === undefined) {
    p = getCiphersuiteImpl(getCiphersuiteFromName(name), provider);
    byName.set(name, p);
    p.catch(() => byName.delete(name));
  }
  return p;
}

/**
 * The implementations of `names` through `provider`. A suite whose implementation cannot load
 * (e.g. X-Wing without `@hpke/hybridkem-x-wing` in a bundle) is left out; the classical one must load.
 */
export async function loadCiphersuites(provider: CryptoProvider, names: readonly CiphersuiteName[]): Promise<Map<CiphersuiteName, CiphersuiteImpl>> {
  const out = new Map<CiphersuiteName, CiphersuiteImpl>();
  for (const name of new Set([MLS_CIPHERSUITE, ...names])) {
    try {
      out.set(name, await ciphersuiteImpl(provider, name));
    } catch (err) {
      if (name === MLS_CIPHERSUITE) throw err;
    }
  }
  return out;
}

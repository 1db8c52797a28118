/**
 * The keys of `did:hub` documents in the key directory (design §8.39): `did/<did>`'s value is the
 * document's verification methods (`@parley/protocol` key-directory/labels.ts `didDocumentValue`).
 */
import { didDocumentValue, didLabel } from '@parley/protocol';
import type { Tx } from '../../db/client.js';
import type { KeyDirectory } from '../key-directory/index.js';
import { buildDidDocument } from './did.js';
import { getHubIdentity, listVerificationMethods } from './repo.js';

/**
 * Commit the verification methods of identity `identityId`'s DID document (owner key included) to
 * the key directory as `did/<did>`, in the caller's transaction, after a write that changed them:
 * registration, an owner key taken from the agent's device, an added method. An identity without
 * any key commits nothing.
 */
export async function commitDidKeys(tx: Tx, directory: KeyDirectory, identityId: string): Promise<void> {
  const identity = await getHubIdentity(tx, identityId);
  if (!identity) return;
  const doc = buildDidDocument({ address: identity.hubAddress, ownerKey: identity.publicKey, methods: await listVerificationMethods(tx, identity.id), wsUrl: '' });
  if (doc.verificationMethod.length === 0) return;
  await directory.publish(tx, [{ label: didLabel(doc.id), value: didDocumentValue(doc.verificationMethod) }]);
}

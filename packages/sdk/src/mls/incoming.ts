/**
 * Checks on a group message `MlsClient.processMessage` receives (RFC 9420 §6): its framing
 * (group id, epoch, content type) against the group state, and the authenticated sender of an
 * application message, read from its sender data (§6.3.2), which ts-mls does not report.
 */
import type { CiphersuiteImpl, ClientState, ContentTypeName, MLSMessage, MlsPrivateMessage, MlsPublicMessage } from 'ts-mls';
// Part of ts-mls's published `./*.js` export map (ts-mls is pinned), not re-exported from its root.
import { decryptSenderData } from 'ts-mls/privateMessage.js';
import { MlsClientError } from './errors.js';
import { bytesEqual, leafDeviceId } from './roster.js';

/** The framing of a group message. */
export interface Framing {
  groupId: Uint8Array;
  epoch: bigint;
  contentType: ContentTypeName;
}

/**
 * The framing of `msg`, checked to be a group message of `groupId` (state `state`) in its current
 * epoch, or an application message of an epoch whose receiver keys are still kept.
 * @throws MlsClientError `malformed_message`, `wrong_group`, `inactive_group`, `epoch_ahead`, `epoch_too_old`.
 */
export function checkFraming(groupId: string, state: ClientState, msg: MLSMessage): { message: MlsPrivateMessage | MlsPublicMessage; framed: Framing } {
  if (msg.wireformat !== 'mls_private_message' && msg.wireformat !== 'mls_public_message') {
    throw new MlsClientError('malformed_message', `expected a group message, got ${msg.wireformat}`);
  }
  const framed = msg.wireformat === 'mls_private_message'
    ? { groupId: msg.privateMessage.groupId, epoch: msg.privateMessage.epoch, contentType: msg.privateMessage.contentType }
    : { groupId: msg.publicMessage.content.groupId, epoch: msg.publicMessage.content.epoch, contentType: msg.publicMessage.content.contentType };
  if (!bytesEqual(framed.groupId, state.groupContext.groupId)) {
    throw new MlsClientError('wrong_group', `message is not for group ${groupId}`);
  }
  const current = state.groupContext.epoch;
  if (framed.epoch > current) {
    if (state.groupActiveState.kind === 'removedFromGroup') {
      throw new MlsClientError('inactive_group', 'removed from the group: later epochs are unreadable');
    }
    throw new MlsClientError('epoch_ahead', `message is for epoch ${framed.epoch}, we are at ${current}`);
  }
  if (framed.epoch < current && (framed.contentType !== 'application' || !state.historicalReceiverData.has(framed.epoch))) {
    throw new MlsClientError('epoch_too_old', `message is for epoch ${framed.epoch}, we are at ${current}`);
  }
  return { message: msg as MlsPrivateMessage | MlsPublicMessage, framed };
}

/**
 * The authenticated sender of a processed application message, from its sender data.
 * @throws MlsClientError `rejected_message` when it names no device.
 */
export async function applicationSender(state: ClientState, msg: MlsPrivateMessage, cs: CiphersuiteImpl): Promise<string> {
  const pm = msg.privateMessage;
  const receiver =
    pm.epoch === state.groupContext.epoch
      ? { senderDataSecret: state.keySchedule.senderDataSecret, ratchetTree: state.ratchetTree }
      : state.historicalReceiverData.get(pm.epoch);
  const senderData = receiver === undefined ? undefined : await decryptSenderData(pm, receiver.senderDataSecret, cs);
  const id = senderData === undefined || receiver === undefined ? undefined : leafDeviceId(receiver.ratchetTree, senderData.leafIndex);
  if (id === undefined) throw new MlsClientError('rejected_message', 'cannot identify the sender');
  return id;
}

/** Why an MLS operation was refused; stable strings the caller can branch on. */
import { CodedError } from '../errors.js';
export type MlsErrorCode =
  /** The bytes are not a well-formed MLS message of the expected kind. */
  | 'malformed_message'
  /** The message failed authentication or decryption, or was refused by MLS validation. */
  | 'rejected_message'
  /** The message belongs to a later epoch than ours: process the pending commit(s) first, then retry. */
  | 'epoch_ahead'
  /** The message belongs to an epoch whose keys are gone (or is a handshake from a past epoch). */
  | 'epoch_too_old'
  /** The message names another group than the one it was given for. */
  | 'wrong_group'
  | 'unknown_group'
  | 'group_exists'
  /** We were removed from the group (or it is suspended): we can no longer send. */
  | 'inactive_group'
  /** A Welcome none of our stored KeyPackages can open. */
  | 'no_matching_key_package'
  | 'invalid_key_package'
  | 'duplicate_member'
  /**
   * A Welcome, commit or proposal would give a group with a roster (`MlsClientCommonOptions.groupRoster`)
   * a member outside it, remove a member, or replace a member's device or signature key.
   */
  | 'membership_refused'
  | 'not_member'
  | 'cannot_remove_self'
  | 'no_pending_commit'
  | 'invalid_state'
  | 'invalid_argument';

export class MlsClientError extends CodedError<MlsErrorCode> {
  override readonly name = 'MlsClientError';
}

/**
 * A transparency-log witness (C2SP tlog-witness, cosignatures per C2SP tlog-cosignature) for the
 * checkpoints of Parley's logs (design §8.33): `startWitness` serves `add-checkpoint` over HTTP.
 */
export {
  startWitness,
  DEFAULT_WITNESS_PORT,
  MAX_WITNESS_BODY,
  WITNESS_KEY_FILE,
  WITNESS_STATE_FILE,
  type RunningWitness,
  type StartWitnessOptions,
  type WitnessedLog,
} from './server.js';
export { addCheckpoint, parseAddCheckpointBody, WitnessError, MAX_PROOF_LINES, TLOG_SIZE_CONTENT_TYPE, type AddCheckpointContext, type AddCheckpointRequest } from './add-checkpoint.js';
export { WitnessState, type WitnessedTreeHead } from './state.js';
export { loadWitnessKey, type WitnessKey } from './key.js';

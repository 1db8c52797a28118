/**
 * The audit log's verifier (design §8.33): RFC 9162 Merkle proofs, C2SP signed notes and
 * checkpoints, C2SP tlog-cosignature witness cosignatures, and the checks of the service's
 * checkpoint, proof and consistency answers against the platform's audit-log key alone.
 */
export * from './merkle.js';
export * from './note.js';
export * from './cosignature.js';
export * from './verify.js';

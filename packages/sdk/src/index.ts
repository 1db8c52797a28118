/**
 * @parley/sdk — the Parley client library for owners and agents (browser and Node core).
 *
 * - `client/`: typed REST client for every server route, agent enrollment with proof of possession.
 * - `did/`: the `did:hub` driver for the `did-resolver` package, DID update signing, key multibase.
 * - `credentials/`: the bundled JSON-LD contexts and an offline document loader for verifying credentials.
 * - `crypto/`: keys, X3DH + Double Ratchet sessions and their wire frames (contract §1.3, §2.4).
 * - `mls/`: MLS (RFC 9420) groups over ts-mls, protocol selection.
 * - `realtime/`: WebSocket client with reconnect, queue, history, catch-up (contract §6.1), message
 *   statuses from delivery and read receipts.
 * - `content/`: the structured content types carried inside ciphertext (contract §2.4).
 * - `secure/`: SecureMessenger, end-to-end conversations over the realtime client (contract §1.3).
 * - `storage`: the session-state store interface and its memory implementation.
 * - `audit-log/`: the audit log's verifier: checkpoints, inclusion and consistency proofs (RFC 9162).
 * - `key-transparency/`: the key directory's verifier and client (design §8.39).
 * - `a2a-card/`: signed A2A Agent Cards anchored in `did:hub`: build, sign, verify.
 * Node-only parts (file store, `ws` factory) are in `@parley/sdk/node`.
 */
export * from './client/rest.js';
export * from './client/errors.js';
export * from './client/routes.js';
export * from '@parley/protocol';
export * from './client/enrollment.js';
export * from './client/key-binding.js';
export * from './did/index.js';
export * from './credentials/index.js';
export * from './crypto/index.js';
export * from './mls/index.js';
export * from './realtime/client.js';
export * from './realtime/types.js';
// The client's ack always carries the client_ref it sent (the wire type has it optional).
export type { MessageAck } from './realtime/types.js';
export * from './realtime/catch-up.js';
export * from './realtime/status.js';
export * from './realtime/scan-rules.js';
export * from './content/types.js';
export * from './storage.js';
export * from './secure/index.js';
export * from './errors.js';
export * from './audit-log/index.js';
export * from './key-transparency/index.js';
export * from './a2a-card/index.js';
export * from './telemetry/spans.js';

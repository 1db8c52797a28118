/**
 * @parley/protocol — Parley's wire contract, the one source of every request, answer and frame
 * shape (schemas only; errors, clients and helpers stay with the server and the SDK):
 * - `common`: ids, keys, timestamps, `{detail}`, message fields (design §7);
 * - `paging`: the `limit` and cursor fields of list queries and the `{items, next_cursor}` page answer;
 * - `contract`: the route row type, auth modes, OpenAPI security, path filling;
 * - `route-docs`: the OpenAPI description of a row (who may call it, its errors and why);
 * - `ws-frames`: the WebSocket frames and events, close codes and socket authentication;
 * - `asyncapi`: the AsyncAPI 3.0 document of the WebSocket protocol, built from `ws-frames`;
 * - `areas/*`: the schemas, route rows and frames of each contract area;
 * - `routes`: `ROUTES`, the route table assembled from the areas;
 * - `audit-log`: what the server and a verifier of the audit log must hash alike (the fields of
 *   the chain hash, RFC 9162 tree hashing over the caller's SHA-256).
 * - `a2a-card`: signed A2A Agent Cards: the JWS signing input and the check of a card against the
 *   signer's `did:hub` document, over the caller's JCS and Ed25519.
 * - `key-directory/*`: the key directory's verifiable structures (design §8.39): the ECVRF of RFC
 *   9381, labels, values, commitments, log entries and prefix-tree hashing, which the server
 *   builds with and the clients verify with.
 * Browser-safe: depends on `@sinclair/typebox`, `@noble/curves`, `@noble/hashes` and
 * `canonicalize`, no Node imports (test/browser-safe).
 */
export * from './common.js';
export * from './paging.js';
export * from './loopback.js';
export * from './signing-domains.js';
export * from './signed-messages.js';
export * from './contract.js';
export * from './route-docs.js';
export * from './ws-frames.js';
export * from './asyncapi.js';
export * from './routes.js';
export * from './areas/platform.js';
export * from './areas/tenants.js';
export * from './areas/devices.js';
export * from './areas/key-binding.js';
export * from './areas/conversations.js';
export * from './areas/mls.js';
export * from './areas/pq-prekeys.js';
export * from './areas/prekeys.js';
export * from './areas/attachments.js';
export * from './areas/api-keys.js';
export * from './areas/rooms.js';
export * from './areas/policies.js';
export * from './areas/settings.js';
export * from './areas/workspaces.js';
export * from './areas/hub.js';
export * from './areas/credentials.js';
export * from './areas/federation.js';
export * from './areas/a2a.js';
export * from './areas/telemetry.js';
export * from './areas/audit.js';
export * from './areas/key-directory.js';
export * from './areas/trust.js';
export * from './areas/grants.js';
export * from './areas/shadow.js';
export * from './areas/decisions.js';
export * from './areas/marketplace.js';
export * from './areas/marketplace-money.js';
export * from './areas/rental-room.js';
export * from './areas/telemetry-export.js';
export * from './areas/spend.js';
export * from './areas/receipts.js';
export * from './trust-context.js';
export * from './audit-log.js';
export * from './a2a-card.js';
export * from './key-directory/vrf.js';
export * from './key-directory/structures.js';
export * from './key-directory/labels.js';

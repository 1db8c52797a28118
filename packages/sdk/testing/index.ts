/**
 * `@parley/sdk/testing`: the SDK's test fixtures, shared by the server's, MCP and web-app suites:
 * - rfc6962, audit-chain: reference vectors of the audit log's Merkle tree (RFC 6962 / RFC 9162
 *   hashes, inclusion and consistency proofs) and of its hash chain, computed independently of the
 *   code under test;
 * - owner-side: an owner device's secure messenger over a real server, for tests that play the
 *   owner of an agent;
 * - echo-agent: an echo agent enrolled, approved and started against a real server.
 */
export * from './rfc6962.js';
export * from './audit-chain.js';
export * from './owner-side.js';
export * from './echo-agent.js';

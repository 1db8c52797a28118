/**
 * `@parley/server/testing`: the server's test fixtures, shared by the server's own suites
 * (packages/server/test/<area>/), the SDK, MCP and web-app suites and the benchmarks. Each builds
 * the real app on a real database (PGlite, or PostgreSQL with TEST_BACKEND=postgres); nothing here
 * mocks the service.
 * - harness: `startApp` (the app on a fresh database, listening on a free port), owner tokens;
 * - flows: tenant, owner device, invite, enrolment, approval and activation over HTTP;
 * - keys, key-agents: client key material as raw hex, API-key agents with registered keys;
 * - marketplace-fixtures: an operator, a certified listed agent, a renter;
 * - ws-client: a promise-based WebSocket client speaking the contract's frames;
 * - own-services: a test's own PostgreSQL and Redis servers, which it may restart or stop;
 * - key-directory: the malicious server of the key-transparency tests (swapped and forged keys).
 */
export * from './harness.js';
export * from './flows.js';
export * from './keys.js';
export * from './key-agents.js';
export * from './marketplace-fixtures.js';
export * from './ws-client.js';
export * from './own-services.js';
export * from './key-directory.js';
/** The database schema (drizzle tables) and the tenant scope, for tests that inspect what the service stored. */
export * as schema from '../src/db/schema/index.js';
export { withTenant } from '../src/db/tenant.js';

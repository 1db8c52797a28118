/**
 * @parley/protocol — Parley's wire contract, the one source of every request, answer and frame
 * shape (schemas only; errors, clients and helpers stay with the server and the SDK):
 * - `common`: ids, keys, timestamps, `{detail}`, message fields (DESIGN §7);
 * - `contract`: the route row type, auth modes, OpenAPI security, path filling;
 * - `routes/*`: the schemas and rows of each SPEC area, assembled in `ROUTES`.
 * Browser-safe: depends on `@sinclair/typebox` alone, no Node imports (test/protocol-boundary).
 */
export * from './common.js';
export * from './contract.js';
export * from './routes/index.js';
export * from './routes/decisions.js';

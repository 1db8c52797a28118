import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

/**
 * Server suites run on PGlite always, and a second time on PostgreSQL when TEST_DATABASE_URL is
 * set (CI sets it); each project sets TEST_BACKEND, read by packages/server/test/harness.ts.
 * SDK and MCP suites run once (`sdk`, `mcp` projects); the ones that need a server start it on PGlite.
 */
const backends = ['pglite', ...(process.env.TEST_DATABASE_URL ? ['postgres'] : [])];
const shared = { testTimeout: 30_000, hookTimeout: 60_000, pool: 'forks' as const };
// @parley/protocol resolves to its TypeScript sources (as its `parley-source` export condition
// does for tsc and tsx), so tests need no build of it.
// The same for @parley/sdk (its entry points) where the MCP package imports it.
const src = (path: string) => fileURLToPath(new URL(path, import.meta.url));
const resolve = {
  alias: [
    { find: /^@parley\/protocol$/, replacement: src('./packages/protocol/src/index.ts') },
    { find: /^@parley\/sdk$/, replacement: src('./packages/sdk/src/index.ts') },
    { find: /^@parley\/sdk\/node$/, replacement: src('./packages/sdk/src/node/index.ts') },
  ],
};

export default defineConfig({
  test: {
    projects: [
      ...backends.map((backend) => ({
        resolve,
        test: { ...shared, name: backend, include: ['packages/server/test/**/*.test.ts'], env: { TEST_BACKEND: backend } },
      })),
      { resolve, test: { ...shared, name: 'mcp', include: ['packages/mcp/test/**/*.test.ts'], env: { TEST_BACKEND: 'pglite' } } },
      // The owners' web app: its own configuration (the React plugin lives in its package).
      'packages/dashboard/vitest.config.ts',
      // The built web app in Debian's Chromium against a real server (PGlite; PostgreSQL when TEST_DATABASE_URL is set).
      {
        resolve,
        test: {
          ...shared,
          name: 'browser',
          include: ['packages/dashboard/e2e/**/*.test.ts'],
          testTimeout: 180_000,
          hookTimeout: 180_000,
          env: { TEST_BACKEND: process.env.TEST_DATABASE_URL ? 'postgres' : 'pglite' },
        },
      },
      { resolve, test: { ...shared, name: 'sdk', include: ['packages/sdk/test/**/*.test.ts', 'packages/protocol/test/**/*.test.ts'], env: { TEST_BACKEND: 'pglite' } } },
    ],
  },
});

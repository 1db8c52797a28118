import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { POSTGRES_TEST_FILES } from './packages/server/test/backend-dependent.js';

/**
 * Server suites run on PGlite always (`pglite` project: every file of packages/server/test), and
 * the backend-dependent ones a second time on PostgreSQL when TEST_DATABASE_URL is set (CI sets
 * it): the `postgres` project runs exactly the files packages/server/test/backend-dependent.ts
 * lists, each with its reason (concurrent sessions and locks, the pipelined hot-path writer,
 * several instances, Redis, restarts, migrations as a non-superuser owner, row-level security).
 * Each project sets TEST_BACKEND, read by packages/server/testing/harness.ts.
 * SDK and MCP suites run once (`sdk`, `mcp` projects); the ones that need a server start it on PGlite.
 *
 * Workers: vitest's default on N cores is N-1 forks (one on a 2-core CI machine). Most files wait
 * on sockets, child processes and the database, so two forks per two cores (or VITEST_MAX_WORKERS)
 * run them side by side. The `browser` project (a Chromium and a server per file) runs after the
 * others, one file at a time.
 */
const backends = ['pglite', ...(process.env.TEST_DATABASE_URL ? ['postgres'] : [])];
const shared = { testTimeout: 30_000, hookTimeout: 60_000, pool: 'forks' as const };
// @parley/protocol resolves to its TypeScript sources (as its `parley-source` export condition
// does for tsc and tsx), so tests need no build of it.
// The same for @parley/sdk (its entry points) where the MCP package imports it, and for the
// test fixtures of the server and the SDK (`@parley/server/testing`, `@parley/sdk/testing`).
const src = (path: string) => fileURLToPath(new URL(path, import.meta.url));
const resolve = {
  alias: [
    { find: /^@parley\/protocol$/, replacement: src('./packages/protocol/src/index.ts') },
    { find: /^@parley\/sdk$/, replacement: src('./packages/sdk/src/index.ts') },
    { find: /^@parley\/sdk\/node$/, replacement: src('./packages/sdk/src/node/index.ts') },
    { find: /^@parley\/sdk\/testing$/, replacement: src('./packages/sdk/testing/index.ts') },
    { find: /^@parley\/server\/testing$/, replacement: src('./packages/server/testing/index.ts') },
  ],
};

/** The server test files each project runs; a listed PostgreSQL file that does not exist stops the run. */
const serverTests = (backend: string): string[] => {
  if (backend === 'pglite') return ['packages/server/test/**/*.test.ts'];
  const files = Object.keys(POSTGRES_TEST_FILES).map((name) => `packages/server/test/${name}`);
  const missing = files.filter((file) => !fs.existsSync(src(`./${file}`)));
  if (missing.length > 0) throw new Error(`packages/server/test/backend-dependent.ts names files that do not exist: ${missing.join(', ')}`);
  return files;
};

export default defineConfig({
  test: {
    maxWorkers: 2,
    projects: [
      ...backends.map((backend) => ({
        resolve,
        test: { ...shared, name: backend, include: serverTests(backend), env: { TEST_BACKEND: backend } },
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
          // One Chromium at a time, after the other projects (a distinct group may have its own worker count).
          maxWorkers: 1,
          sequence: { groupOrder: 1 },
          env: { TEST_BACKEND: process.env.TEST_DATABASE_URL ? 'postgres' : 'pglite' },
        },
      },
      { resolve, test: { ...shared, name: 'sdk', include: ['packages/sdk/test/**/*.test.ts', 'packages/protocol/test/**/*.test.ts'], env: { TEST_BACKEND: 'pglite' } } },
    ],
  },
});

import { defineConfig } from 'vitest/config';

/**
 * Server suites run on PGlite always, and a second time on PostgreSQL when TEST_DATABASE_URL is
 * set (CI sets it); each project sets TEST_BACKEND, read by packages/server/test/harness.ts.
 * SDK suites run once (`sdk` project); the ones that need a server start it on PGlite.
 */
const backends = ['pglite', ...(process.env.TEST_DATABASE_URL ? ['postgres'] : [])];
const shared = { testTimeout: 30_000, hookTimeout: 60_000, pool: 'forks' as const };

export default defineConfig({
  test: {
    projects: [
      ...backends.map((backend) => ({
        test: { ...shared, name: backend, include: ['packages/server/test/**/*.test.ts'], env: { TEST_BACKEND: backend } },
      })),
      { test: { ...shared, name: 'sdk', include: ['packages/sdk/test/**/*.test.ts'], env: { TEST_BACKEND: 'pglite' } } },
    ],
  },
});

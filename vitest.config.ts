import { defineConfig } from 'vitest/config';

/**
 * Tests run on PGlite always, and a second time on PostgreSQL when TEST_DATABASE_URL is set
 * (CI sets it). Each project sets TEST_BACKEND, read by test/harness.ts.
 */
const backends = ['pglite', ...(process.env.TEST_DATABASE_URL ? ['postgres'] : [])];

export default defineConfig({
  test: {
    projects: backends.map((backend) => ({
      test: {
        name: backend,
        include: ['packages/*/test/**/*.test.ts', 'packages/*/src/**/*.test.ts'],
        env: { TEST_BACKEND: backend },
        testTimeout: 30_000,
        hookTimeout: 60_000,
        pool: 'forks',
      },
    })),
  },
});

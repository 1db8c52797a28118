/**
 * Tests of the owners' web app: `test/` holds component and logic tests in a DOM (happy-dom);
 * `e2e/` drives the built app in Debian's Chromium against a real server (playwright-core).
 */
import react from '@vitejs/plugin-react';
import { defaultClientConditions } from 'vite';
import { defineProject } from 'vitest/config';

export default defineProject({
  plugins: [react()],
  resolve: { conditions: ['parley-source', ...defaultClientConditions] },
  test: {
    name: 'dashboard',
    environment: 'happy-dom',
    include: ['test/**/*.test.{ts,tsx}'],
    pool: 'forks',
    testTimeout: 30_000,
  },
});

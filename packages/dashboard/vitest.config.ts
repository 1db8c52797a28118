/**
 * Component and logic tests of the owners' web app (`test/`), in a DOM (happy-dom). Its browser
 * tests (`e2e/`: the built app in Debian's Chromium against a real server) are the root
 * configuration's `browser` project.
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

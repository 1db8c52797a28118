/**
 * Build of the owners' web app (design §8.30): static files in `dist/`, served by the server at `/`.
 * `@parley/sdk` and `@parley/protocol` are bundled from their TypeScript sources (the
 * `parley-source` export condition), so the app needs no prior build of them. `npm run dev -w
 * @parley/dashboard` serves it with hot reload against a server on 127.0.0.1:8080.
 */
import react from '@vitejs/plugin-react';
import { defaultClientConditions, defineConfig } from 'vite';

const api = process.env.PARLEY_URL ?? 'http://127.0.0.1:8080';

export default defineConfig({
  plugins: [react()],
  resolve: { conditions: ['parley-source', ...defaultClientConditions] },
  build: { outDir: 'dist', target: 'es2022', sourcemap: false, chunkSizeWarningLimit: 2000 },
  server: {
    proxy: {
      '/api': { target: api, ws: true },
      '/.well-known': api,
      '/health': api,
    },
  },
});

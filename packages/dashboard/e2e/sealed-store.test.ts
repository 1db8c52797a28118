/**
 * The web app's sealed IndexedDB store (`src/lib/sealed-store.ts`) in Chromium: an older sealed
 * copy of a record put back is refused (in the same page and after a reload), records saved before
 * counters existed still open and are then protected, and — what the store's documentation says
 * about its limits — a non-extractable WebCrypto key stored in IndexedDB is written into the
 * profile's files, so a copy of the profile holds the key.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { build, type Rolldown } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, CHROMIUM_FLAGS } from './browser.js';

const DASHBOARD = fileURLToPath(new URL('../', import.meta.url));
// A secure context (WebCrypto needs one); requests are answered by the test, never sent.
const ORIGIN = 'http://localhost:9';

/** Raw IndexedDB access for the test (what someone editing the profile could do), as page script. */
const RAW_IDB = `
window.rawIdb = {
  run(mode, store, fn) {
    return new Promise((resolve, reject) => {
      const open = indexedDB.open('parley-dashboard');
      open.onerror = () => reject(open.error);
      open.onsuccess = () => {
        const tx = open.result.transaction(store, mode);
        const req = fn(tx.objectStore(store));
        tx.oncomplete = () => { open.result.close(); resolve(req.result); };
        tx.onerror = () => reject(tx.error);
      };
    });
  },
  get(store, key) { return this.run('readonly', store, (s) => s.get(key)); },
  put(store, key, value) { return this.run('readwrite', store, (s) => s.put(value, key)); },
};`;

interface PageGlobals {
  ParleySealedStore: typeof import('../src/lib/sealed-store.js');
  rawIdb: { get(store: string, key: string): Promise<unknown>; put(store: string, key: string, value: unknown): Promise<void> };
}

/** sealed-store.ts and its `idb` dependency as one classic script defining `ParleySealedStore`. */
async function bundle(): Promise<string> {
  const result = await build({
    configFile: false,
    logLevel: 'silent',
    root: DASHBOARD,
    build: { write: false, minify: false, emptyOutDir: false, lib: { entry: path.join(DASHBOARD, 'src/lib/sealed-store.ts'), formats: ['iife'], name: 'ParleySealedStore', fileName: () => 'sealed-store.js' } },
  });
  const output = (Array.isArray(result) ? result[0] : result) as Rolldown.RolldownOutput;
  return output.output[0].code;
}

describe('sealed IndexedDB store in Chromium', () => {
  let profile: string;
  let context: BrowserContext;
  let page: Page;
  let script: string;

  beforeAll(async () => {
    script = await bundle();
    profile = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-sealed-profile-'));
    context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: CHROMIUM_FLAGS });
    await context.route(`${ORIGIN}/**`, (route) => {
      const url = new URL(route.request().url());
      if (url.pathname === '/sealed-store.js') return route.fulfill({ contentType: 'text/javascript', body: script });
      if (url.pathname === '/raw-idb.js') return route.fulfill({ contentType: 'text/javascript', body: RAW_IDB });
      return route.fulfill({ contentType: 'text/html', body: '<!doctype html><title>sealed store</title><script src="/sealed-store.js"></script><script src="/raw-idb.js"></script>' });
    });
    page = await context.newPage();
    await page.goto(`${ORIGIN}/`);
  });
  afterAll(async () => {
    await context?.close();
    if (profile) fs.rmSync(profile, { recursive: true, force: true });
  });

  it('an older sealed copy of a record put back is refused, in the page and after a reload', async () => {
    const inPage = await page.evaluate(async () => {
      const { ParleySealedStore: m, rawIdb } = window as unknown as PageGlobals;
      const store = await m.SealedStore.open('owner-a');
      await store.save('session', 'state 1');
      const old = await rawIdb.get('sealed', 'owner-a/session');
      await store.save('session', 'state 2');
      const current = await store.load('session');
      await rawIdb.put('sealed', 'owner-a/session', old);
      const refused = await store.load('session').then(
        () => 'accepted',
        (e: Error) => `${e.name}: ${e.message}`,
      );
      return { current, refused };
    });
    expect(inPage.current).toBe('state 2');
    expect(inPage.refused).toMatch(/^SealedRollbackError: the sealed record session is older \(counter 1\) than the one this browser last saved \(counter 2\)/);

    await page.reload();
    const afterReload = await page.evaluate(async () => {
      const { ParleySealedStore: m } = window as unknown as PageGlobals;
      const store = await m.SealedStore.open('owner-a');
      return store.load('session').then(
        () => 'accepted',
        (e: Error) => e.name,
      );
    });
    expect(afterReload).toBe('SealedRollbackError');
  });

  it('a record saved before counters opens, is then sealed with a counter, and its old copy is refused', async () => {
    const result = await page.evaluate(async () => {
      const { ParleySealedStore: m, rawIdb } = window as unknown as PageGlobals;
      const store = await m.SealedStore.open('owner-b');
      // A record as the first version of the store wrote it: the id alone as additional data, no counter.
      const key = (await rawIdb.get('wrapping-keys', 'owner-b')) as CryptoKey;
      const iv = crypto.getRandomValues(new Uint8Array(12));
      const ct = await crypto.subtle.encrypt({ name: 'AES-GCM', iv, additionalData: new TextEncoder().encode('owner-b/identity') }, key, new TextEncoder().encode('legacy keys'));
      const legacy = { iv, ct };
      await rawIdb.put('sealed', 'owner-b/identity', legacy);
      const read = await store.load('identity');
      await store.save('identity', 'legacy keys');
      await rawIdb.put('sealed', 'owner-b/identity', legacy);
      const fresh = await m.SealedStore.open('owner-b');
      const refused = await fresh.load('identity').then(
        () => 'accepted',
        (e: Error) => e.name,
      );
      return { read, refused };
    });
    expect(result).toEqual({ read: 'legacy keys', refused: 'SealedRollbackError' });
  });

  it('a non-extractable key stored in IndexedDB is written into the profile files (what the sealing does not protect against)', async () => {
    const raw = Buffer.from(Array.from({ length: 32 }, (_, i) => (i * 37 + 11) & 0xff));
    await page.evaluate(async (bytes) => {
      const { rawIdb } = window as unknown as PageGlobals;
      const key = await crypto.subtle.importKey('raw', new Uint8Array(bytes), { name: 'AES-GCM' }, false, ['encrypt', 'decrypt']);
      await rawIdb.put('wrapping-keys', 'probe', key);
    }, [...raw]);
    await context.close();
    const found = (function search(dir: string): boolean {
      return fs.readdirSync(dir, { withFileTypes: true }).some((e) => {
        const p = path.join(dir, e.name);
        if (e.isDirectory()) return search(p);
        return e.isFile() && fs.readFileSync(p).includes(raw);
      });
    })(path.join(profile, 'Default', 'IndexedDB'));
    expect(found).toBe(true);
  });
});

/**
 * Browser-test kit: Debian's Chromium driven by playwright-core with the
 * machine's headless flags, an axe-core check that fails on serious or critical violations, and
 * screenshots saved as test artifacts under `test-results/dashboard/` at the repository root.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import axe from 'axe-core';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
export const DIST = fileURLToPath(new URL('../dist/', import.meta.url));
export const ARTIFACTS = path.join(ROOT, 'test-results', 'dashboard');

/** Chromium binary: `CHROMIUM_PATH`, else Debian's (`apt-get install -y chromium`). */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Flags that keep Chromium off the (closed) network of CI machines. */
export const CHROMIUM_FLAGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** Launch headless Chromium (a fresh temporary profile each time). */
export function launch(): Promise<Browser> {
  if (!fs.existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: install it with "apt-get install -y chromium" or set CHROMIUM_PATH`);
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_FLAGS });
}

/** Save a full-page screenshot as `<name>.png` in the artifacts folder. */
export async function screenshot(page: Page, name: string): Promise<string> {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  const file = path.join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

/** An axe-core violation, reduced to what a failure message needs. */
export interface AxeProblem {
  id: string;
  impact: string | null | undefined;
  help: string;
  targets: string[];
}

/**
 * Run axe-core (WCAG 2.x A and AA rules) on the page; returns the serious and critical
 * violations. The page's CSP forbids inline script, so the context must bypass CSP to inject it.
 */
export async function seriousViolations(page: Page): Promise<AxeProblem[]> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.addScriptTag({ content: axe.source });
  const results = await page.evaluate(async () => {
    const a = (window as unknown as { axe: typeof axe }).axe;
    const r = await a.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.map((n) => String(n.target)) }));
  });
  return results.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

/**
 * A new context (CSP bypassed so axe can be injected, a 1280×900 viewport) and page whose console
 * lines and uncaught errors are appended to `log`, the first thing to read when a test fails.
 */
export async function openPage(browser: Browser, log: string[]): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ bypassCSP: true, viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  page.on('console', (m) => log.push(`[${m.type()}] ${m.text()}`));
  page.on('pageerror', (e) => log.push(`[pageerror] ${e.stack ?? e.message}`));
  return { context, page };
}

/** Poll `get` every 50 ms until it gives a value other than `undefined`/`false`; throws after `ms`, naming `what`. */
export async function until<T>(what: string, get: () => T | undefined | false | Promise<T | undefined | false>, ms = 30_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await get();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

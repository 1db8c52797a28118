/**
 * `@parley/protocol` is browser-safe: its sources import nothing but `@sinclair/typebox`, the
 * pure-JavaScript `@noble/curves`, `@noble/hashes` and `canonicalize` (the key directory's VRF,
 * hashes and JCS) and each other (no `node:*`, Fastify, drizzle or Node globals), and its entry
 * loads without them.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = path.join(path.dirname(fileURLToPath(import.meta.url)), '../src');
const files = (dir: string): string[] =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : []));
/** The browser-safe packages the sources may import. */
const ALLOWED = /^(@sinclair\/typebox|@noble\/(curves|hashes)\/[a-z0-9-]+\.js|canonicalize)$/;
const SPECIFIER = /(?:^|\n)\s*(?:import|export)\b[^'"]*?from\s*['"]([^'"]+)['"]|import\s*\(\s*['"]([^'"]+)['"]\s*\)/g;

describe('@parley/protocol is browser-safe', () => {
  it('imports only @sinclair/typebox, @noble/curves, @noble/hashes, canonicalize and its own files', () => {
    const bad: string[] = [];
    for (const f of files(SRC)) {
      const text = fs.readFileSync(f, 'utf8');
      for (const m of text.matchAll(SPECIFIER)) {
        const spec = m[1] ?? m[2]!;
        if (!spec.startsWith('./') && !spec.startsWith('../') && !ALLOWED.test(spec)) bad.push(`${path.relative(SRC, f)}: ${spec}`);
      }
      if (/\b(process|Buffer|require)\s*[.(]/.test(text)) bad.push(`${path.relative(SRC, f)}: uses a Node global`);
    }
    expect(bad).toEqual([]);
  });

  it('the pattern catches a Node import', () => {
    const sample = "import fs from 'node:fs';\nexport { x } from 'fastify';";
    expect([...sample.matchAll(SPECIFIER)].map((m) => m[1])).toEqual(['node:fs', 'fastify']);
  });

  it('the entry exports the route table and the shared schemas', async () => {
    const p = await import('@parley/protocol');
    expect(Object.keys(p.ROUTES).length).toBeGreaterThan(0);
    expect(p.Uuid.format).toBe('uuid');
  });
});

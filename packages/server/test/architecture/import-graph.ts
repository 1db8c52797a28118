/**
 * The import graph of packages/server/src for boundary tests: every relative static import,
 * re-export, side-effect import and dynamic import (type-only imports included), by folder unit
 * (`modules/<name>`, or the top-level folder or file under src).
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** packages/server/src. */
export const SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../src');

/** Module specifiers of static imports, re-exports, side-effect imports and dynamic imports. */
export function specifiers(code: string): string[] {
  const re = /\b(?:from|import)\s*\(?\s*['"]([^'"]+)['"]/g;
  return [...code.matchAll(re)].map((m) => m[1]!);
}

/** Every .ts/.tsx file under `dir`. */
export function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? sourceFiles(p) : /\.[cm]?tsx?$/.test(e.name) ? [p] : [];
  });
}

/** The folder unit of a file under src: `modules/<name>`, else its top-level folder (or file, without extension). */
export function unitOf(file: string): string {
  const parts = path.relative(SRC, file).split(path.sep);
  if (parts[0] === 'modules') return `modules/${parts[1]}`;
  return parts.length > 1 ? parts[0]! : parts[0]!.replace(/\.[cm]?tsx?$/, '');
}

/** One import between two units: `from` imports `to` in `file` with `specifier`. */
export interface UnitImport {
  from: string;
  to: string;
  file: string;
  specifier: string;
}

/** The imports of `files` that cross from one unit to another. */
export function unitImports(files: string[]): UnitImport[] {
  return files.flatMap((file) =>
    specifiers(fs.readFileSync(file, 'utf8'))
      .filter((s) => s.startsWith('.'))
      .flatMap((s) => {
        const target = path.resolve(path.dirname(file), s);
        if (!target.startsWith(SRC + path.sep)) return [];
        const from = unitOf(file);
        const to = unitOf(target);
        return from === to ? [] : [{ from, to, file: path.relative(SRC, file), specifier: s }];
      }),
  );
}

/** The strongly connected components of more than one unit (Tarjan), each sorted. */
export function cycles(imports: UnitImport[]): string[][] {
  const graph = new Map<string, Set<string>>();
  for (const i of imports) {
    if (!graph.has(i.from)) graph.set(i.from, new Set());
    if (!graph.has(i.to)) graph.set(i.to, new Set());
    graph.get(i.from)!.add(i.to);
  }
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v)!) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

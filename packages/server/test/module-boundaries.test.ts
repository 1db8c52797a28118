/**
 * Module boundaries of packages/server/src (docs/architecture.md "Layers"): folders import each
 * other in one direction only (no folder-level import cycle, type-only imports included); the
 * foundation folders (lib, db, keys) and auth import no module.
 */
import { describe, expect, it } from 'vitest';
import { cycles, sourceFiles, SRC, unitImports, type UnitImport } from './import-graph.js';

const imports = unitImports(sourceFiles(SRC));
const from = (unit: string) => imports.filter((i) => i.from === unit);
const show = (list: UnitImport[]) => list.map((i) => `${i.file}: ${i.specifier}`);

describe('server module boundaries', () => {
  it('finds cycles when there are some', () => {
    const edge = (a: string, b: string): UnitImport => ({ from: a, to: b, file: `${a}/x.ts`, specifier: `../${b}/y.js` });
    expect(cycles([edge('a', 'b'), edge('b', 'c'), edge('c', 'a'), edge('c', 'd')])).toEqual([['a', 'b', 'c']]);
    expect(cycles([edge('a', 'b'), edge('b', 'c')])).toEqual([]);
  });

  it('reads the real tree', () => {
    expect(imports.some((i) => i.from === 'app' && i.to.startsWith('modules/'))).toBe(true);
  });

  it('has no folder-level import cycle', () => {
    expect(cycles(imports)).toEqual([]);
  });

  it('the foundation (lib, db, keys) and auth import no module, and lib imports nothing above it', () => {
    for (const unit of ['lib', 'db', 'keys', 'auth']) expect(show(from(unit).filter((i) => i.to.startsWith('modules/')))).toEqual([]);
    expect(show(from('lib').filter((i) => i.to !== 'db'))).toEqual([]);
    expect(show(from('keys').filter((i) => !['lib', 'db'].includes(i.to)))).toEqual([]);
  });
});

/**
 * Module boundaries of packages/server/src (docs/architecture.md "Layers", "Composition"): folders
 * import each other in one direction only (no folder-level import cycle, type-only imports
 * included); the foundation folders (lib, db, keys) and auth import no module; a module imports
 * another module only through that module's `index.ts` (type-only imports included).
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cycles, sourceFiles, SRC, unitImports, type UnitImport } from './import-graph.js';

const imports = unitImports(sourceFiles(SRC));
const from = (unit: string) => imports.filter((i) => i.from === unit);
const show = (list: UnitImport[]) => list.map((i) => `${i.file}: ${i.specifier}`);

/** The imports of one module into another that name a file other than the other module's index.ts. */
const pastIndex = (list: UnitImport[]) =>
  list.filter((i) => i.from.startsWith('modules/') && i.to.startsWith('modules/') && path.resolve(SRC, path.dirname(i.file), i.specifier) !== path.join(SRC, i.to, 'index.js'));

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

  it('finds module imports that bypass the index when there are some', () => {
    const edge = (file: string, specifier: string, to: string): UnitImport => ({ from: `modules/${file.split('/')[0]}`, to, file: `modules/${file}`, specifier });
    const ok = [edge('a/x.ts', '../b/index.js', 'modules/b'), edge('a/deep/y.ts', '../../b/index.js', 'modules/b'), edge('a/x.ts', '../../lib/z.js', 'lib')];
    const bad = [edge('a/x.ts', '../b/repo.js', 'modules/b'), edge('a/x.ts', '../b/sub/index.js', 'modules/b')];
    expect(show(pastIndex([...ok, ...bad]))).toEqual(['modules/a/x.ts: ../b/repo.js', 'modules/a/x.ts: ../b/sub/index.js']);
  });

  it('a module imports another module only through its index.ts', () => {
    expect(show(pastIndex(imports))).toEqual([]);
  });

  it('the foundation (lib, db, keys) and auth import no module, and lib imports nothing above it', () => {
    for (const unit of ['lib', 'db', 'keys', 'auth']) expect(show(from(unit).filter((i) => i.to.startsWith('modules/')))).toEqual([]);
    expect(show(from('lib').filter((i) => i.to !== 'db'))).toEqual([]);
    expect(show(from('keys').filter((i) => !['lib', 'db'].includes(i.to)))).toEqual([]);
  });
});

/**
 * The list of server test files that run on PostgreSQL too (backend-dependent.ts, read by
 * vitest.config.ts): it names existing test files only, each with a reason, and no file with a
 * test that runs only on PostgreSQL (or that creates PostgreSQL databases itself) is left off it,
 * so that no test is silently run on neither backend.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { POSTGRES_TEST_FILES } from '../backend-dependent.js';

const TEST_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** Every server test file, as its path under packages/server/test (`<area>/<name>.test.ts`). */
const testFiles = (fs.readdirSync(TEST_DIR, { recursive: true }) as string[]).map((name) => name.split(path.sep).join('/')).filter((name) => name.endsWith('.test.ts'));

/** What marks a file as needing the `postgres` project: a PostgreSQL-only test or database of its own. */
const POSTGRES_MARKERS = [
  /\bbackend\s*[!=]==\s*'postgres'/,
  /\bTEST_BACKEND\s*[!=]==\s*'postgres'/,
  /\bcreatePgDatabase\(/,
  /\bprocess\.env\.TEST_DATABASE_URL\b/,
  /from '\.\/migrations-before\.js'/,
];

describe('backend-dependent server tests', () => {
  it('names existing test files, each once with a reason', () => {
    const names = Object.keys(POSTGRES_TEST_FILES);
    expect(names.length).toBeGreaterThan(0);
    expect(names.filter((name) => !testFiles.includes(name))).toEqual([]);
    for (const [name, reason] of Object.entries(POSTGRES_TEST_FILES)) expect(reason.trim().length, name).toBeGreaterThan(10);
  });

  it('lists every file with a PostgreSQL-only test', () => {
    const self = path.relative(TEST_DIR, fileURLToPath(import.meta.url)).split(path.sep).join('/');
    const marked = testFiles.filter((name) => name !== self && POSTGRES_MARKERS.some((re) => re.test(fs.readFileSync(path.join(TEST_DIR, name), 'utf8'))));
    // The markers find the files they are meant to find (a rename of `backend` would blind them).
    expect(marked).toEqual(expect.arrayContaining(['cluster/restart.test.ts', 'cluster/cluster.test.ts', 'db/migration-message-receipts.test.ts']));
    expect(marked.filter((name) => !(name in POSTGRES_TEST_FILES))).toEqual([]);
  });
});

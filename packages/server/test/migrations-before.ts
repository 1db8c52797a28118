/**
 * Test helper for data migrations: a copy of the migrations folder whose journal stops before a
 * tag, so a test can build the schema as it was, store rows, then run the remaining migrations.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'vitest';
import { MIGRATIONS_DIR } from '../src/db/migrate.js';

/** A temporary copy of the migrations folder whose journal stops before `tag` (remove it when done). */
export function migrationsBefore(tag: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-migrations-'));
  fs.cpSync(MIGRATIONS_DIR, dir, { recursive: true });
  const file = path.join(dir, 'meta', '_journal.json');
  const journal = JSON.parse(fs.readFileSync(file, 'utf8')) as { entries: { tag: string; idx: number }[] };
  const at = journal.entries.findIndex((e) => e.tag === tag);
  expect(at).toBeGreaterThan(0);
  journal.entries = journal.entries.slice(0, at);
  fs.writeFileSync(file, JSON.stringify(journal));
  return dir;
}

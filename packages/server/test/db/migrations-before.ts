/**
 * Test helpers for data migrations: a copy of the migrations folder whose journal stops before a
 * tag, so a test can build the schema as it was, store rows, then run the remaining migrations;
 * and, on PostgreSQL, a database owned by a role that is not a superuser (docs/operations.md: the
 * migrations may run as the database owner with CREATEROLE), for whom forced row-level security
 * applies.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { expect } from 'vitest';
import { MIGRATIONS_DIR } from '../../src/db/migrate.js';

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

/**
 * Run `body` with a fresh database on `TEST_DATABASE_URL`'s server owned by a new LOGIN CREATEROLE
 * role (not a superuser): `ownerUrl` connects as that role, `adminUrl` as the superuser (row-level
 * security does not hide rows from it). Both are dropped afterwards.
 */
export async function withOwnerDatabase(body: (urls: { ownerUrl: string; adminUrl: string }) => Promise<void>): Promise<void> {
  const serverUrl = process.env.TEST_DATABASE_URL;
  if (!serverUrl) throw new Error('TEST_DATABASE_URL is not set');
  const suffix = `${Date.now()}_${randomBytes(4).toString('hex')}`;
  const [role, name] = [`parley_owner_${suffix}`, `parley_test_owner_${suffix}`];
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(`create role ${role} login createrole`);
    await admin.query(`create database ${name} owner ${role}`);
    const url = new URL(serverUrl);
    url.pathname = `/${name}`;
    const adminUrl = url.toString();
    url.username = role;
    await body({ ownerUrl: url.toString(), adminUrl });
  } finally {
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.query(`drop role if exists ${role}`);
    await admin.end();
  }
}

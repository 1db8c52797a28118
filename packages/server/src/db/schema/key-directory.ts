/**
 * The key directory (design §8.39): platform tables without `tenant_id`, since one directory spans
 * every tenant and its labels are hidden behind VRF indexes. They hold no label, no key and no
 * tenant data: indexes, versions, commitments and their openings, prefix roots, and the witness
 * cosignatures of checkpoints.
 */
import { bigint, integer, pgTable, primaryKey, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { bytea, createdAt } from './columns.js';

/**
 * The directory's log, append-only (a trigger refuses updates and deletes): entry `seq` is leaf
 * `seq - 1` of the RFC 9162 tree. The application role may read and append, in the transaction
 * that stores the keys an entry commits to.
 */
export const keyDirectoryEntries = pgTable(
  'key_directory_entries',
  {
    seq: bigint('seq', { mode: 'number' }).primaryKey(),
    vrfIndex: bytea('vrf_index').notNull(),
    version: integer('version').notNull(),
    commitment: bytea('commitment').notNull(),
    opening: bytea('opening').notNull(),
    prefixRoot: bytea('prefix_root').notNull(),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('key_directory_entries_index_version').on(t.vrfIndex, t.version)],
);

/** Witness cosignatures (C2SP tlog-cosignature) of the directory's checkpoints, one per tree size and witness key. */
export const keyDirectoryCosignatures = pgTable(
  'key_directory_cosignatures',
  {
    treeSize: bigint('tree_size', { mode: 'number' }).notNull(),
    /** The witness's vkey. */
    witness: text('witness').notNull(),
    /** The cosignature line as the witness answered it (`— <name> <base64>`). */
    line: text('line').notNull(),
    rootHash: bytea('root_hash').notNull(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.treeSize, t.witness] })],
);

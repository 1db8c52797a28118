/**
 * The server test files that run a second time on PostgreSQL (the `postgres` project of
 * vitest.config.ts, when TEST_DATABASE_URL is set). Every file of packages/server/test runs on
 * PGlite (the `pglite` project); PGlite is PostgreSQL itself (same parser, planner, row-level
 * security, triggers, full-text search), so a file runs again on PostgreSQL only when what it
 * tests behaves differently there:
 * - several sessions at once: the pool's connections racing for locks, transactions interleaving,
 *   group commits and batchers flushing concurrently (PGlite has one connection);
 * - the hot-path writer (db/tenant-writer.ts): pipelined connections on PostgreSQL, drizzle on PGlite
 *   (messages, room sends, receipts, telemetry ingest);
 * - several instances or processes on one database, the Redis bus, a cluster, a restart;
 * - migrations run as a database owner that is not a superuser (docs/operations.md);
 * - node-postgres' rows and errors where repository code reads raw SQL results (sums, counts,
 *   money, days) on the paths the trust engine, the ledger and spend caps depend on;
 * - tests that themselves run only on PostgreSQL (`backend === 'postgres'`).
 * backend-dependent.test.ts checks that this list names existing files only, and that every file
 * with a PostgreSQL-only test is on it.
 */

/** Test file path (under packages/server/test: `<area>/<name>.test.ts`) → why it runs on PostgreSQL too. */
export const POSTGRES_TEST_FILES: Readonly<Record<string, string>> = {
  // Several instances, processes or services on one database; Redis; restarts.
  'cluster/cluster.test.ts': 'two instances behind HAProxy on one PostgreSQL and Redis (skipped on PGlite)',
  'cluster/cluster-faults.test.ts': 'faults of a two-instance cluster on its own PostgreSQL and Redis (skipped on PGlite)',
  'cluster/cluster-instances.test.ts': 'presence, limits, jobs and cursors across two instances (skipped on PGlite)',
  'cluster/redis-bus.test.ts': 'two instances joined by the Redis bus (skipped on PGlite)',
  'cluster/policy-cache-cluster.test.ts': 'policy epochs read across two instances (skipped on PGlite)',
  'cluster/receipts-cluster.test.ts': 'receipts across two instances (skipped on PGlite)',
  'telemetry/telemetry-export.test.ts': 'the export outbox drained by two instances sharing one database',
  'push/push-web.test.ts': 'the push outbox claimed by two workers on one database (SKIP LOCKED across pool connections)',
  'audit/audit-transparency.test.ts': 'concurrent appends to the transparency log from two instances on one database',
  'key-directory/directory.test.ts': 'concurrent appends to the key directory racing for its advisory lock on pool connections',
  'marketplace/marketplace-payouts.test.ts': 'two instances running the payout at the same moment pay once',
  'http/defects-auth.test.ts': 'a renewal challenge issued by one instance renews on another sharing the database',
  'devices/key-rotation.test.ts': 'the key-rotation CLI against the database of a running service',
  'cluster/restart.test.ts': 'history and tokens survive a restart on the same PostgreSQL database',
  'marketplace/payments-local.test.ts': 'a pending processor charge settles after a restart on the same PostgreSQL database',
  'audit/audit.test.ts': 'the audit-verify CLI on a PostgreSQL database; chained events in their own transactions',
  // Migrations as a database owner that is not a superuser (forced row-level security applies).
  'db/migration-message-receipts.test.ts': 'migration 0040 run as a non-superuser database owner',
  'db/migration-room-receipt-batches.test.ts': 'migrations 0041/0042 run as a non-superuser database owner',
  'db/rls.test.ts': 'row-level security of every tenant table, on the server the service runs on in production',
  // Locks, transactions and concurrent sessions (one connection on PGlite serialises them).
  'db/tenant-writer.test.ts': 'the pipelined tenant writer (PostgreSQL only): lock order, COMMIT, a killed connection',
  'trust/trust-job.test.ts': 'the job lease and session advisory lock raced by separate pools',
  'trust/trust-routes.test.ts': 'a recompute refused (409) while another session holds the tenant lock',
  'grants/decisions.test.ts': 'the deadline job raced by workers on separate pool connections fires once',
  'trust/shadow.test.ts': 'two concurrent graduations promote once',
  'grants/grant-revocation.test.ts': 'an SPT issue racing a downgrade waits for the identity lock (FOR SHARE)',
  'devices/prekeys.test.ts': 'one-time prekeys handed out once under concurrent claims',
  'rooms/held-messages.test.ts': 'a member removal racing the approval of a held message',
  'marketplace/ledger-property.test.ts': 'ledger balances under random rentals/refunds/payouts; the database refuses unbalanced transactions',
  // The hot path: the pipelined writer on PostgreSQL, drizzle on PGlite.
  'conversations/conversations.test.ts': 'message writes and history cursors; a transaction committing late (PostgreSQL only)',
  'conversations/websocket.test.ts': 'socket sends acknowledged after COMMIT through the pipelined writer',
  'rooms/rooms.test.ts': 'room sends and fan-out through the room flush',
  'rooms/rooms-group-commit.test.ts': 'concurrent room sends written together in one transaction',
  'receipts/receipts.test.ts': 'batched delivered/read receipts of pairwise messages',
  'receipts/receipts-rooms.test.ts': 'receipts of room envelopes',
  'receipts/room-receipt-batches.test.ts': 'writers racing on the same envelopes under the tenant receipt lock',
  'telemetry/telemetry-ingest-batch.test.ts': 'ingest group commit: a value PostgreSQL refuses fails alone',
  'telemetry/telemetry.test.ts': 'span ingest through the pipelined writer and the raw-SQL queries over it',
  // Repository code reading raw SQL results (node-postgres rows).
  'trust/trust-engine.test.ts': 'signal extraction and recompute over seeded rows (raw SQL aggregates)',
  'trust/trust-rollups.test.ts': 'span roll-ups and pruning against a reference (raw SQL aggregates by UTC day)',
  'grants/spend.test.ts': 'spend summed from raw spans and token roll-ups by UTC period',
};

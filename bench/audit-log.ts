/**
 * bench/audit-log: what the transparency log (design §8.33) costs, next to a baseline measured in
 * the same run (design §9):
 *
 *   append     one audit event per transaction, as every audited action writes it:
 *              baseline = the chain alone (lock, newest link, insert: the append of the hash chain alone),
 *              tree     = appendAudit (the same plus the Merkle tree's leaf and completed subtrees);
 *              the two alternate in rounds of 100 so that both see the same machine;
 *   checkpoint GET /audit/checkpoint's work: a new size (root + Ed25519 signature + insert) and a
 *              kept size (one read);
 *   proofs     an event's proof bundle and a consistency proof between kept checkpoints, at the
 *              log's final size.
 *
 * On PostgreSQL (a fresh database on 127.0.0.1, dropped at the end) and on in-memory PGlite.
 *
 *   npm run bench:audit-log -- [--events 2000] [--database-url postgres://postgres@127.0.0.1:5432/postgres] [--backends postgres,pglite]
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { sql } from 'drizzle-orm';
import { openDatabase, type Database } from '../packages/server/src/db/client.js';
import { runMigrations } from '../packages/server/src/db/migrate.js';
import { withTenant } from '../packages/server/src/db/tenant.js';
import { SecretBox } from '../packages/server/src/lib/secret-box.js';
import { AuditLogKeys } from '../packages/server/src/keys/index.js';
import * as repo from '../packages/server/src/modules/audit/repo.js';
import { appendAudit } from '../packages/server/src/modules/audit/service.js';
import { eventHash, GENESIS_HASH } from '../packages/server/src/modules/audit/chain.js';
import { AuditTransparency } from '../packages/server/src/modules/audit/transparency.js';
import { assertLoopback, runMain } from './relay/cli.js';
import { createDatabase } from './relay/setup.js';

const { values: argv } = parseArgs({ options: { events: { type: 'string' }, 'database-url': { type: 'string' }, backends: { type: 'string' } } });
const EVENTS = Number(argv.events ?? 2000);
const ROUND = 100;
const adminUrl = argv['database-url'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const backends = (argv.backends ?? 'postgres,pglite').split(',');

const input = { type: 'settings.updated' as const, actor: 'bench', data: { scan_rules_enabled: true } };

/** The append of the hash chain alone (service.ts appendAudit without the tree). */
async function appendChainOnly(db: Database['db'], tenantId: string): Promise<void> {
  await withTenant(db, tenantId, async (tx) => {
    await repo.lockChain(tx, tenantId);
    const last = await repo.lastLink(tx, tenantId);
    const prevHash = last?.hash ?? GENESIS_HASH;
    const createdAt = new Date();
    const event = { event_id: randomUUID(), tenant_id: tenantId, seq: (last?.seq ?? 0) + 1, type: input.type, actor: input.actor, subject: null, data: input.data, created_at: createdAt.toISOString() };
    await repo.insertAuditEvent(tx, { id: event.event_id, tenantId, seq: event.seq, type: event.type, actor: event.actor, subject: null, data: event.data, createdAt, prevHash, hash: eventHash(prevHash, event) });
  });
}

async function timed(n: number, fn: () => Promise<unknown>): Promise<number> {
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) await fn();
  return Number(process.hrtime.bigint() - t0) / 1e6 / n;
}

async function bench(name: string, database: Database): Promise<void> {
  const db = database.db;
  await runMigrations(database);
  const [a, b] = [randomUUID(), randomUUID()];
  await db.execute(sql`insert into tenants (id, name) values (${a}, 'bench chain'), (${b}, 'bench tree')`);
  let chainMs = 0;
  let treeMs = 0;
  const keys = new AuditLogKeys(db, new SecretBox(randomBytes(32)), 'http://127.0.0.1:8080');
  await keys.init();
  const log = new AuditTransparency(db, keys);
  const kept: number[] = [];
  for (let done = 0; done < EVENTS; done += ROUND) {
    chainMs += await timed(ROUND, () => appendChainOnly(db, a));
    treeMs += await timed(ROUND, () => withTenant(db, b, (tx) => appendAudit(tx, b, input)));
    kept.push((await log.latest(b)).tree_size);
  }
  const rounds = EVENTS / ROUND;
  const newSize = await timed(1, async () => {
    await withTenant(db, b, (tx) => appendAudit(tx, b, input));
    await log.latest(b);
  });
  const keptSize = await timed(50, () => log.latest(b));
  const ids = (await db.execute(sql`select id from audit_events where tenant_id = ${b} order by seq`)) as unknown as { rows: { id: string }[] };
  const sample = Array.from({ length: 100 }, (_, i) => ids.rows[Math.floor((i * ids.rows.length) / 100)]!.id);
  let i = 0;
  const proof = await timed(sample.length, () => log.eventProof(b, sample[i++ % sample.length]!));
  let j = 0;
  const consistency = await timed(50, () => {
    const first = kept[j++ % (kept.length - 1)]!;
    return log.consistency(b, first, kept.at(-1)!);
  });
  console.log(`\n${name}: ${EVENTS} events per tenant, one transaction each`);
  console.log(`  append, chain only (baseline)   ${(chainMs / rounds).toFixed(3)} ms`);
  console.log(`  append, chain + tree            ${(treeMs / rounds).toFixed(3)} ms   (${(treeMs / chainMs).toFixed(2)}x the baseline)`);
  console.log(`  checkpoint, new size            ${newSize.toFixed(3)} ms   (append included)`);
  console.log(`  checkpoint, kept size           ${keptSize.toFixed(3)} ms`);
  console.log(`  event proof bundle              ${proof.toFixed(3)} ms`);
  console.log(`  consistency proof               ${consistency.toFixed(3)} ms`);
}

runMain(async () => {
  if (backends.includes('postgres')) {
    assertLoopback(adminUrl);
    const created = await createDatabase(adminUrl);
    const database = await openDatabase({ databaseUrl: created.url, poolSize: 4 });
    try {
      await bench('PostgreSQL', database);
    } finally {
      await database.close();
      await created.drop();
    }
  }
  if (backends.includes('pglite')) {
    const database = await openDatabase({ inMemory: true, pgliteSeed: false });
    try {
      await bench('PGlite (in memory)', database);
    } finally {
      await database.close();
    }
  }
  return 0;
});

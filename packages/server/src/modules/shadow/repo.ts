/**
 * Shadow-session queries (contract §2.14, §4.17; design §8.8, §8.20). All run inside a tenant-scoped
 * transaction (`withTenant`), so RLS limits them to the caller's tenant. The evidence aggregates
 * implement the rules of gates.ts ({@link import('./gates.js').tally}) in SQL.
 */
import { and, asc, eq, gt, gte, inArray, or, sql, type SQL } from 'drizzle-orm';
import type { Tx } from '../../db/client.js';
import { shadowObservations as obs, shadowSessions as sessions } from '../../db/schema/index.js';

export type SessionRow = typeof sessions.$inferSelect;
export type ObservationRow = typeof obs.$inferSelect;

/** Level evidence of one session: observations at its current level since `level_since`. */
export interface LevelStats {
  observations: number;
  agreed: number;
  criticalMisses: number;
}

export const insertSession = async (tx: Tx, row: typeof sessions.$inferInsert): Promise<SessionRow> => (await tx.insert(sessions).values(row).returning())[0]!;

/**
 * Serialise creations for one (agent, skill, decision class) with a transaction-scoped advisory
 * lock, so the duplicate check and the insert cannot race (there is no unique index on the table).
 */
export async function lockSessionKey(tx: Tx, deviceId: string, skillName: string, decisionClass: string): Promise<void> {
  await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${`shadow:${deviceId}:${skillName}:${decisionClass}`}, 0))`);
}

/** The session of `deviceId` for this skill and decision class, if one exists. */
export async function findSession(tx: Tx, deviceId: string, skillName: string, decisionClass: string): Promise<SessionRow | undefined> {
  const [row] = await tx
    .select()
    .from(sessions)
    .where(and(eq(sessions.deviceId, deviceId), eq(sessions.skillName, skillName), eq(sessions.decisionClass, decisionClass)))
    .limit(1);
  return row;
}

/**
 * One session; `lock` takes `FOR SHARE` (recording: several may record at once, a level change
 * waits) or `FOR UPDATE` (graduate / demote: one level change at a time).
 */
export async function getSession(tx: Tx, id: string, lock?: 'share' | 'update'): Promise<SessionRow | undefined> {
  const q = tx.select().from(sessions).where(eq(sessions.id, id));
  const [row] = lock ? await q.for(lock) : await q;
  return row;
}

export async function updateSession(tx: Tx, id: string, set: Partial<typeof sessions.$inferInsert>): Promise<SessionRow> {
  const [row] = await tx.update(sessions).set(set).where(eq(sessions.id, id)).returning();
  return row!;
}

/** A list position: strictly after (`created_at`, `id`). */
export interface SessionCursor {
  at: Date;
  id: string;
}

/** Sessions oldest first (`created_at`, `id`), optionally of one device and/or at one level. */
export function listSessions(tx: Tx, f: { deviceId?: string; level?: string }, after: SessionCursor | undefined, limit: number): Promise<SessionRow[]> {
  const where: SQL[] = [];
  if (f.deviceId) where.push(eq(sessions.deviceId, f.deviceId));
  if (f.level) where.push(eq(sessions.level, f.level));
  if (after) where.push(or(gt(sessions.createdAt, after.at), and(eq(sessions.createdAt, after.at), gt(sessions.id, after.id)))!);
  return tx
    .select()
    .from(sessions)
    .where(where.length > 0 ? and(...where) : undefined)
    .orderBy(asc(sessions.createdAt), asc(sessions.id))
    .limit(limit);
}

/**
 * Insert an observation unless the session already holds its `observation_id`; returns the row,
 * or undefined for a duplicate (the unique (session_id, observation_id) index decides, race-free).
 */
export async function insertObservation(tx: Tx, row: typeof obs.$inferInsert): Promise<ObservationRow | undefined> {
  const [r] = await tx.insert(obs).values(row).onConflictDoNothing({ target: [obs.sessionId, obs.observationId] }).returning();
  return r;
}

const count = (cond?: SQL) => (cond ? sql<number>`count(*) filter (where ${cond})` : sql<number>`count(*)`).mapWith(Number);

/**
 * Level evidence of each session in `ids` (observations recorded at the session's current level,
 * at or after its `level_since`), in one grouped query. Sessions without evidence are absent.
 */
export async function levelStats(tx: Tx, ids: string[]): Promise<Map<string, LevelStats>> {
  if (ids.length === 0) return new Map();
  const rows = await tx
    .select({ sessionId: obs.sessionId, observations: count(), agreed: count(sql`${obs.agreed}`), criticalMisses: count(sql`${obs.criticalMiss}`) })
    .from(obs)
    .innerJoin(sessions, and(eq(sessions.id, obs.sessionId), eq(obs.level, sessions.level), gte(obs.recordedAt, sessions.levelSince)))
    .where(inArray(obs.sessionId, ids))
    .groupBy(obs.sessionId);
  return new Map(rows.map((r) => [r.sessionId, { observations: r.observations, agreed: r.agreed, criticalMisses: r.criticalMisses }]));
}

/** Critical misses of a session recorded at or after `from` (any level). */
export async function missesSince(tx: Tx, sessionId: string, from: Date): Promise<number> {
  const [r] = await tx
    .select({ n: count() })
    .from(obs)
    .where(and(eq(obs.sessionId, sessionId), eq(obs.criticalMiss, true), sql`${obs.recordedAt} >= ${from.toISOString()}::timestamptz`));
  return r?.n ?? 0;
}

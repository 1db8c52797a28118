/**
 * The audit hash chain, pure (design §8.10, §8.22): per tenant, event n carries
 * `prev_hash` = hash of event n-1 (64 zeros for seq 1) and
 * `hash = hex(BLAKE2b-256(bytes(prev_hash) || UTF-8(JCS(event))))`, where `event` is
 * `{event_id, tenant_id, seq, type, actor, subject, data, created_at}` (created_at ISO 8601 UTC)
 * and JCS is RFC 8785 canonical JSON.
 */
import { blake2b } from '@noble/hashes/blake2.js';
import type { AuditChainEvent } from '@parley/protocol';
import canonicalize from 'canonicalize';

/** The `prev_hash` of a tenant's first event. */
export const GENESIS_HASH = '0'.repeat(64);

/** A stored row as {@link verifyChain} checks it: the event plus its recorded links. */
export interface ChainRow extends AuditChainEvent {
  prev_hash: string;
  hash: string;
}

/** `hex(BLAKE2b-256(hexdecode(prevHash) || UTF-8(JCS(event))))`, lowercase. */
export function eventHash(prevHash: string, event: AuditChainEvent): string {
  const canonical = canonicalize({ ...event });
  if (canonical === undefined) throw new Error('audit event is not serialisable');
  const body = Buffer.concat([Buffer.from(prevHash, 'hex'), Buffer.from(canonical, 'utf8')]);
  return Buffer.from(blake2b(body, { dkLen: 32 })).toString('hex');
}

/** The outcome of a chain check; `first_broken` names the first link that fails. */
export interface ChainVerdict {
  valid: boolean;
  /** Rows examined (all of them when valid; up to and including the broken one otherwise). */
  checked: number;
  first_broken: { seq: number; event_id: string; reason: 'seq_gap' | 'prev_hash_mismatch' | 'hash_mismatch' } | null;
}

/**
 * Recompute a tenant's chain. `rows` must be that tenant's events ordered by `seq` ascending.
 * Detects an edited row (`hash_mismatch`), a deleted or inserted row (`seq_gap` or
 * `prev_hash_mismatch`) and a relinked row (`prev_hash_mismatch`).
 */
export function verifyChain(rows: readonly ChainRow[]): ChainVerdict {
  let prev = GENESIS_HASH;
  let checked = 0;
  for (const [i, row] of rows.entries()) {
    checked++;
    const broken = (reason: NonNullable<ChainVerdict['first_broken']>['reason']): ChainVerdict => ({
      valid: false,
      checked,
      first_broken: { seq: row.seq, event_id: row.event_id, reason },
    });
    if (row.seq !== i + 1) return broken('seq_gap');
    if (row.prev_hash !== prev) return broken('prev_hash_mismatch');
    const { prev_hash: _p, hash, ...event } = row;
    void _p;
    if (eventHash(prev, event) !== hash) return broken('hash_mismatch');
    prev = hash;
  }
  return { valid: true, checked, first_broken: null };
}

/**
 * One re-seal pass over stored sealed values ({@link SecretBox} values under a rotating secrets
 * key, docs/operations.md "Key rotation"): the pass shared by platform keys, webhook secrets and
 * telemetry-export secrets.
 */
/** Counts of a re-seal pass (keys/sealed-keys.ts, webhooks/secrets.ts, telemetry-export/secrets.ts). */
export interface ResealReport {
  /** Rows with a sealed value. */
  checked: number;
  /** Rows rewritten under the current key (opened under a previous key, or legacy clear values). */
  resealed: number;
  /** Rows already sealed under the current key. */
  current: number;
  /** Rows that open under no key of the ring (left as they are; they cannot be used). */
  failed: number;
}

/**
 * One re-seal pass over `rows`: `next(row)` answers the value sealed under the current key, null
 * when the row already is, and throws when no key opens it; `write(row, sealed)` stores a changed
 * one (only if the row still holds what was read). Answers the counts.
 */
export async function resealRows<R>(rows: R[], next: (row: R) => string | null, write: (row: R, sealed: string) => Promise<unknown>): Promise<ResealReport> {
  const report: ResealReport = { checked: rows.length, resealed: 0, current: 0, failed: 0 };
  for (const row of rows) {
    let sealed: string | null;
    try {
      sealed = next(row);
    } catch {
      report.failed++;
      continue;
    }
    if (sealed === null) {
      report.current++;
      continue;
    }
    await write(row, sealed);
    report.resealed++;
  }
  return report;
}

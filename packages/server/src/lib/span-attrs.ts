/**
 * SQL over the flattened jsonb `attributes` of `telemetry_spans` (SPEC §2.15), shared by the trust
 * roll-ups (modules/trust/rollups.ts) and the spend roll-ups (modules/spend/rollups.ts).
 */
import { sql, type SQL } from 'drizzle-orm';

/**
 * A numeric span attribute (the text of a JSON number, or a string of digits: otlp.ts stores an
 * int64 beyond 2^53 as a string), else null; negative or non-numeric values count as absent.
 * `key` is a constant of the caller (inlined), and `attributes` is read unqualified.
 */
export const numAttr = (key: string): SQL => sql.raw(`(case when attributes->>'${key}' ~ '^[0-9]+(\\.[0-9]+)?$' then (attributes->>'${key}')::float8 end)`);

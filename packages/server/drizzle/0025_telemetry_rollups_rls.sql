-- Row-level security for the tenant tables of 0024 (design §4): the policy of 0001_rls.sql.
SELECT parley_enable_tenant_rls(t::regclass) FROM unnest(ARRAY['telemetry_span_rollups','telemetry_rollup_dirty']) AS t;
--> statement-breakpoint
-- Every INSERT into telemetry_spans marks the (tenant, device, UTC day) pairs it touched as dirty
-- (modules/trust/rollups.ts; docs/decisions.md "Trust engine"): one statement per INSERT statement,
-- in the inserting transaction, whoever inserts (ingest, seeds, tests). DO UPDATE (not DO NOTHING)
-- takes the mark's row lock, so a roll-up that deletes the mark waits for this transaction and then
-- sees its spans; pairs are locked in (device, day) order.
CREATE OR REPLACE FUNCTION parley_mark_rollup_dirty() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO telemetry_rollup_dirty (tenant_id, device_id, day)
  SELECT DISTINCT tenant_id, device_id, (start_time AT TIME ZONE 'UTC')::date FROM parley_new_spans ORDER BY 1, 2, 3
  ON CONFLICT (tenant_id, device_id, day) DO UPDATE SET marked_at = now();
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER telemetry_spans_mark_rollup_dirty AFTER INSERT ON telemetry_spans
  REFERENCING NEW TABLE AS parley_new_spans FOR EACH STATEMENT EXECUTE FUNCTION parley_mark_rollup_dirty();
--> statement-breakpoint
-- Spans stored before this migration: every (device, day) they cover is dirty, so the next
-- recompute rolls them up and the pruning job keeps them until then.
INSERT INTO telemetry_rollup_dirty (tenant_id, device_id, day)
SELECT DISTINCT tenant_id, device_id, (start_time AT TIME ZONE 'UTC')::date FROM telemetry_spans
ON CONFLICT DO NOTHING;

-- Row-level security for the tables of 0035 (design §4): the policy of 0001_rls.sql.
SELECT parley_enable_tenant_rls(t::regclass) FROM unnest(ARRAY['telemetry_export_settings','telemetry_export_outbox']) AS t;
--> statement-breakpoint
-- The export outbox is filled by statement triggers (docs/decisions.md "Telemetry export"): every
-- INSERT statement into telemetry_spans / audit_events enqueues its rows, in the inserting
-- transaction, for the tenants that have an export endpoint. Without one (most tenants) the cost
-- is one index probe of telemetry_export_settings per statement: under the tenant's RLS scope
-- the EXISTS sees only the tenant's own row. The insert itself joins the new rows with the
-- settings, so a cross-tenant insert (seeds, tools) enqueues only for configured tenants.
CREATE OR REPLACE FUNCTION parley_enqueue_span_export() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM telemetry_export_settings) THEN RETURN NULL; END IF;
  INSERT INTO telemetry_export_outbox (tenant_id, kind, ref_id)
  SELECT n.tenant_id, 'span', n.id FROM parley_export_new_spans n
  WHERE n.tenant_id IN (SELECT s.tenant_id FROM telemetry_export_settings s);
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER telemetry_spans_enqueue_export AFTER INSERT ON telemetry_spans
  REFERENCING NEW TABLE AS parley_export_new_spans FOR EACH STATEMENT EXECUTE FUNCTION parley_enqueue_span_export();
--> statement-breakpoint
CREATE OR REPLACE FUNCTION parley_enqueue_audit_export() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM telemetry_export_settings) THEN RETURN NULL; END IF;
  INSERT INTO telemetry_export_outbox (tenant_id, kind, ref_id)
  SELECT n.tenant_id, 'audit', n.id FROM parley_export_new_audit n
  WHERE n.tenant_id IN (SELECT s.tenant_id FROM telemetry_export_settings s);
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER audit_events_enqueue_export AFTER INSERT ON audit_events
  REFERENCING NEW TABLE AS parley_export_new_audit FOR EACH STATEMENT EXECUTE FUNCTION parley_enqueue_audit_export();

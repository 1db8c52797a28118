-- Row-level security for the tables of 0016 (design §4): the policy of 0001_rls.sql. The audit
-- log is append-only for the application role: no UPDATE or DELETE grant (design §8.10).
SELECT parley_enable_tenant_rls(t::regclass) FROM unnest(ARRAY['audit_events','telemetry_spans']) AS t;
--> statement-breakpoint
REVOKE UPDATE, DELETE ON audit_events FROM parley_app;

-- Row-level security for mls_key_packages (DESIGN §4), as in 0001_rls.sql.
ALTER TABLE mls_key_packages ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE mls_key_packages FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_isolation ON mls_key_packages USING (tenant_id = nullif(current_setting('app.tenant_id', true), '')::uuid) WITH CHECK (tenant_id = nullif(current_setting('app.tenant_id', true), '')::uuid);
--> statement-breakpoint
GRANT SELECT, INSERT, UPDATE, DELETE ON mls_key_packages TO parley_app;

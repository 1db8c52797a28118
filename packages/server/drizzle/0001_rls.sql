-- Row-level security and the application role (design §4).
-- Every tenant-owned table: ENABLE + FORCE ROW LEVEL SECURITY and one policy comparing tenant_id
-- with the transaction-local setting app.tenant_id (nullif: an unset scope sees nothing).
DO $$
BEGIN
  CREATE ROLE parley_app NOLOGIN NOBYPASSRLS;
EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
END $$;
--> statement-breakpoint
DO $$
BEGIN
  EXECUTE format('GRANT parley_app TO %I', current_user);
EXCEPTION WHEN OTHERS THEN NULL;
END $$;
--> statement-breakpoint
GRANT USAGE ON SCHEMA public TO parley_app;
--> statement-breakpoint
-- One definition of the tenant policy, used by this and every later migration.
CREATE OR REPLACE FUNCTION parley_enable_tenant_rls(t regclass) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format('ALTER TABLE %s ENABLE ROW LEVEL SECURITY', t);
  EXECUTE format('ALTER TABLE %s FORCE ROW LEVEL SECURITY', t);
  EXECUTE format('CREATE POLICY tenant_isolation ON %s USING (tenant_id = nullif(current_setting(''app.tenant_id'', true), '''')::uuid) WITH CHECK (tenant_id = nullif(current_setting(''app.tenant_id'', true), '''')::uuid)', t);
  EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON %s TO parley_app', t);
END $$;
--> statement-breakpoint
SELECT parley_enable_tenant_rls(t::regclass)
FROM unnest(ARRAY['memberships','invites','devices','device_challenges','conversation_groups','conversations','topics','messages']) AS t;
--> statement-breakpoint
ALTER TABLE tenants ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE tenants FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_isolation ON tenants USING (id = nullif(current_setting('app.tenant_id', true), '')::uuid) WITH CHECK (id = nullif(current_setting('app.tenant_id', true), '')::uuid);
--> statement-breakpoint
GRANT SELECT, INSERT, UPDATE ON tenants TO parley_app;
--> statement-breakpoint
GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO parley_app;

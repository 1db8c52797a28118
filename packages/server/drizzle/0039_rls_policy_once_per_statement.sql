-- Tenant isolation evaluated once per statement (issues 15 and 21; design §4). The policies of
-- 0001_rls.sql and 0007 compared each row with `nullif(current_setting('app.tenant_id', true),
-- '')::uuid`, a stable expression PostgreSQL evaluates again for every row a statement inserts
-- or filters: about 1 µs per row, a tenth of a room envelope's or receipt's insert. As a scalar
-- subquery `(select …)` the planner runs it once per statement (an InitPlan) and compares each
-- row with its value. Which rows a tenant sees or may write is unchanged.
CREATE OR REPLACE FUNCTION parley_tenant_scope() RETURNS text LANGUAGE sql IMMUTABLE AS
$$ SELECT '(select nullif(current_setting(''app.tenant_id'', true), '''')::uuid)' $$;
--> statement-breakpoint
-- One definition for both kinds of table: RLS enabled and forced, the tenant_isolation policy on
-- `cond` (USING and WITH CHECK), and the application role's grants.
CREATE OR REPLACE FUNCTION parley_enable_rls(t regclass, cond text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format('ALTER TABLE %s ENABLE ROW LEVEL SECURITY', t);
  EXECUTE format('ALTER TABLE %s FORCE ROW LEVEL SECURITY', t);
  EXECUTE format('CREATE POLICY tenant_isolation ON %s USING (%s) WITH CHECK (%s)', t, cond, cond);
  EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON %s TO parley_app', t);
END $$;
--> statement-breakpoint
-- The policy condition of each kind of table: its own `id` (tenants), either party (the
-- two-party tables), `tenant_id` (every other table).
CREATE OR REPLACE FUNCTION parley_rls_condition(kind text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE kind
    WHEN 'tenants' THEN format('id = %s', parley_tenant_scope())
    WHEN 'two_party' THEN format('%s IN (tenant_id, partner_tenant_id)', parley_tenant_scope())
    ELSE format('tenant_id = %s', parley_tenant_scope())
  END $$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION parley_enable_tenant_rls(t regclass) RETURNS void LANGUAGE sql AS
$$ SELECT parley_enable_rls(t, parley_rls_condition('tenant')) $$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION parley_enable_two_party_rls(t regclass) RETURNS void LANGUAGE sql AS
$$ SELECT parley_enable_rls(t, parley_rls_condition('two_party')) $$;
--> statement-breakpoint
-- Every existing tenant_isolation policy, rewritten in place by its kind.
DO $$
DECLARE
  p record;
  cond text;
BEGIN
  FOR p IN SELECT schemaname, tablename, qual FROM pg_policies WHERE policyname = 'tenant_isolation' LOOP
    cond := parley_rls_condition(CASE WHEN p.tablename = 'tenants' THEN 'tenants' WHEN p.qual LIKE '%partner_tenant_id%' THEN 'two_party' ELSE 'tenant' END);
    EXECUTE format('ALTER POLICY tenant_isolation ON %I.%I USING (%s) WITH CHECK (%s)', p.schemaname, p.tablename, cond, cond);
  END LOOP;
END $$;

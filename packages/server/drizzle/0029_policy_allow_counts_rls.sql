-- Row-level security for the tenant tables of 0028 (design §4): the policy of 0001_rls.sql.
SELECT parley_enable_tenant_rls(t::regclass) FROM unnest(ARRAY['policy_allow_counts','policy_epochs']) AS t;
--> statement-breakpoint
-- The version of a tenant's policy set (modules/policies/compiled.ts): every insert,
-- update and delete of a policy bumps it in the writing transaction, whoever writes (policy routes,
-- rooms scoping policies, cascades from rooms), so every instance's compiled-rule cache sees the
-- change in the next decision's statement. The row lock serialises concurrent writers of a tenant.
CREATE OR REPLACE FUNCTION parley_bump_policy_epoch() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  t uuid;
BEGIN
  IF TG_OP = 'DELETE' THEN t := OLD.tenant_id; ELSE t := NEW.tenant_id; END IF;
  INSERT INTO policy_epochs AS p (tenant_id, epoch) VALUES (t, 1)
  ON CONFLICT (tenant_id) DO UPDATE SET epoch = p.epoch + 1;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER policies_bump_epoch AFTER INSERT OR UPDATE OR DELETE ON policies
  FOR EACH ROW EXECUTE FUNCTION parley_bump_policy_epoch();

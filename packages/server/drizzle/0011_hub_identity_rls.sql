-- Row-level security for the hub identity tables of 0010 (design §4): the policy of 0001_rls.sql.
SELECT parley_enable_tenant_rls(t::regclass)
FROM unnest(ARRAY['hub_verification_methods','hub_capabilities','hub_tier_changes','issued_credentials']) AS t;

-- Row-level security for the tables of 0014 (design §4): the policy of 0001_rls.sql.
SELECT parley_enable_tenant_rls(t::regclass) FROM unnest(ARRAY['decisions','tenant_settings','scan_rule_sets']) AS t;

-- Row-level security for mls_key_packages (design §4): the policy of 0001_rls.sql.
SELECT parley_enable_tenant_rls('mls_key_packages'::regclass);

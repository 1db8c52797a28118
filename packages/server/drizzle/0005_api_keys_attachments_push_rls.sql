-- Row-level security for the tables of 0004 (design §4): the policy of 0001_rls.sql.
SELECT parley_enable_tenant_rls(t::regclass) FROM unnest(ARRAY['api_keys','attachments','push_tokens']) AS t;

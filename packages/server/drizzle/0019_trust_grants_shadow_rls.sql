-- Row-level security for the tenant tables of 0018 (design §4): the policy of 0001_rls.sql.
SELECT parley_enable_tenant_rls(t::regclass)
FROM unnest(ARRAY['device_presence','trust_snapshots','trust_daily_scores','trust_baselines','skill_grants','shadow_sessions','shadow_observations']) AS t;
--> statement-breakpoint
-- scheduled_jobs is a platform table (no tenant_id): the cluster-wide job lease, claimed through
-- crossTenant(); the application role gets no grant on it, like platform_keys.
REVOKE ALL ON scheduled_jobs FROM parley_app;

-- Row-level security for the tables of 0006 (design §4).
-- Single-tenant tables: the policy of 0001_rls.sql.
SELECT parley_enable_tenant_rls(t::regclass)
FROM unnest(ARRAY['workspaces','workspace_members','rooms','room_members','room_conversations','room_messages','room_envelopes',
                  'policies','held_messages','policy_evaluations','hub_identities','webhook_deliveries']) AS t;
--> statement-breakpoint
-- Two-party tables (A2A channels and messages, federation agreements): a row belongs to both the
-- initiating tenant (tenant_id) and the partner tenant (partner_tenant_id); either may read and
-- update it, and a write must keep the scoped tenant as one of the two parties.
CREATE OR REPLACE FUNCTION parley_enable_two_party_rls(t regclass) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format('ALTER TABLE %s ENABLE ROW LEVEL SECURITY', t);
  EXECUTE format('ALTER TABLE %s FORCE ROW LEVEL SECURITY', t);
  EXECUTE format('CREATE POLICY tenant_isolation ON %s USING (nullif(current_setting(''app.tenant_id'', true), '''')::uuid IN (tenant_id, partner_tenant_id)) WITH CHECK (nullif(current_setting(''app.tenant_id'', true), '''')::uuid IN (tenant_id, partner_tenant_id))', t);
  EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON %s TO parley_app', t);
END $$;
--> statement-breakpoint
SELECT parley_enable_two_party_rls(t::regclass) FROM unnest(ARRAY['federation_agreements','a2a_channels','a2a_messages']) AS t;
--> statement-breakpoint
GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO parley_app;

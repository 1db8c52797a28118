-- Listings carry whether their identity is one verify-agent calls `suspended` (verification/service.ts
-- `agentStatus`: the identity suspended, or its bound device revoked or deleted), so that the
-- catalogue leaves them out: searches by other tenants and anonymous ones cannot read hub_identities
-- or devices under RLS. Kept on every change of either, in the same transaction, like the trust
-- tier (0021).
ALTER TABLE "marketplace_listings" ADD COLUMN "agent_suspended" boolean DEFAULT false NOT NULL;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION parley_identity_suspended(p_identity uuid) RETURNS boolean LANGUAGE sql STABLE AS $$
  SELECT coalesce(h.status <> 'active' OR d.status = 'REVOKED' OR d.deleted_at IS NOT NULL, false)
  FROM hub_identities h LEFT JOIN devices d ON d.id = h.device_id
  WHERE h.id = p_identity
$$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION parley_listing_agent_sync(p_identity uuid) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  v_suspended boolean := coalesce(parley_identity_suspended(p_identity), false);
BEGIN
  UPDATE marketplace_listings SET agent_suspended = v_suspended
  WHERE identity_id = p_identity AND agent_suspended IS DISTINCT FROM v_suspended;
END $$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION parley_listing_agent_sync_identity() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM parley_listing_agent_sync(NEW.id);
  RETURN NEW;
END $$;
--> statement-breakpoint
CREATE TRIGGER hub_identities_listing_agent AFTER UPDATE OF status, device_id ON hub_identities FOR EACH ROW EXECUTE FUNCTION parley_listing_agent_sync_identity();
--> statement-breakpoint
CREATE OR REPLACE FUNCTION parley_listing_agent_sync_device() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM parley_listing_agent_sync(h.id) FROM hub_identities h WHERE h.device_id = NEW.id;
  RETURN NEW;
END $$;
--> statement-breakpoint
CREATE TRIGGER devices_listing_agent AFTER UPDATE OF status, deleted_at ON devices FOR EACH ROW EXECUTE FUNCTION parley_listing_agent_sync_device();
--> statement-breakpoint
CREATE OR REPLACE FUNCTION parley_listing_agent_init() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.agent_suspended := coalesce(parley_identity_suspended(NEW.identity_id), false);
  RETURN NEW;
END $$;
--> statement-breakpoint
CREATE TRIGGER marketplace_listings_agent BEFORE INSERT OR UPDATE OF identity_id ON marketplace_listings FOR EACH ROW EXECUTE FUNCTION parley_listing_agent_init();
--> statement-breakpoint
UPDATE marketplace_listings SET agent_suspended = true WHERE parley_identity_suspended(identity_id);

-- Signed A2A Agent Cards (docs/decisions.md "Signed Agent Cards anchored in did:hub"): the card a
-- hub identity's agent signed and published, stored as given after its signature verified against
-- the identity's DID document, and when it was stored. The columns fall under the tenant policy of
-- hub_identities.
ALTER TABLE "hub_identities" ADD COLUMN "agent_card" jsonb;--> statement-breakpoint
ALTER TABLE "hub_identities" ADD COLUMN "agent_card_updated_at" timestamp with time zone;

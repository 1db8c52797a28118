ALTER TABLE "room_envelopes" DROP CONSTRAINT "room_envelopes_tenant_id_tenants_id_fk";

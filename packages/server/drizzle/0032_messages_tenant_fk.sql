ALTER TABLE "messages" DROP CONSTRAINT "messages_tenant_id_tenants_id_fk";

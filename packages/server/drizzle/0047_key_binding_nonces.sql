-- Key bindings (docs/decisions.md "Key bindings"): spent key-binding nonces, one row per nonce a
-- registration or activation used, until the nonce expires (single use); and an index on the
-- devices' identity keys, which a registration without a key binding looks up across tenants.
CREATE TABLE "key_binding_nonces" (
	"nonce" text PRIMARY KEY NOT NULL,
	"tenant_id" uuid NOT NULL,
	"purpose" text NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"used_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "key_binding_nonces" ADD CONSTRAINT "key_binding_nonces_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "key_binding_nonces_tenant_expires_idx" ON "key_binding_nonces" USING btree ("tenant_id","expires_at");--> statement-breakpoint
CREATE INDEX "devices_identity_public_key_idx" ON "devices" USING btree ("identity_public_key");--> statement-breakpoint
-- Row-level security (docs/architecture.md "Tenancy"): the tenant policy of 0001_rls.sql.
SELECT parley_enable_tenant_rls('key_binding_nonces'::regclass);

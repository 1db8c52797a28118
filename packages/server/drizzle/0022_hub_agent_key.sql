ALTER TABLE "hub_identities" ADD COLUMN "api_key_id" uuid;--> statement-breakpoint
ALTER TABLE "hub_identities" ADD CONSTRAINT "hub_identities_api_key_id_api_keys_id_fk" FOREIGN KEY ("api_key_id") REFERENCES "public"."api_keys"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "hub_identities_api_key_idx" ON "hub_identities" USING btree ("api_key_id");
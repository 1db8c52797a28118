CREATE TABLE "hub_capabilities" (
	"id" uuid PRIMARY KEY NOT NULL,
	"tenant_id" uuid NOT NULL,
	"identity_id" uuid NOT NULL,
	"name" text NOT NULL,
	"version" text NOT NULL,
	"description" text,
	"input_schema" jsonb NOT NULL,
	"sla" jsonb,
	"certification_tier" text DEFAULT 'unverified' NOT NULL,
	"registered_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "hub_tier_changes" (
	"id" uuid PRIMARY KEY NOT NULL,
	"tenant_id" uuid NOT NULL,
	"identity_id" uuid NOT NULL,
	"from_tier" text NOT NULL,
	"to_tier" text NOT NULL,
	"reason" text NOT NULL,
	"checks" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "hub_verification_methods" (
	"id" uuid PRIMARY KEY NOT NULL,
	"tenant_id" uuid NOT NULL,
	"identity_id" uuid NOT NULL,
	"key_id" text NOT NULL,
	"type" text NOT NULL,
	"public_key_multibase" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "issued_credentials" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" uuid NOT NULL,
	"identity_id" uuid,
	"type" text NOT NULL,
	"subject" text NOT NULL,
	"issued_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone,
	"revoked_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "hub_identities" ADD COLUMN "status" text DEFAULT 'active' NOT NULL;--> statement-breakpoint
ALTER TABLE "hub_identities" ADD COLUMN "did_updated_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "hub_identities" ADD COLUMN "certified_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "hub_identities" ADD COLUMN "last_attestation_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "hub_identities" ADD COLUMN "search_document" "tsvector";--> statement-breakpoint
ALTER TABLE "hub_identities" ADD COLUMN "updated_at" timestamp with time zone DEFAULT now() NOT NULL;--> statement-breakpoint
ALTER TABLE "hub_capabilities" ADD CONSTRAINT "hub_capabilities_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "hub_capabilities" ADD CONSTRAINT "hub_capabilities_identity_id_hub_identities_id_fk" FOREIGN KEY ("identity_id") REFERENCES "public"."hub_identities"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "hub_tier_changes" ADD CONSTRAINT "hub_tier_changes_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "hub_tier_changes" ADD CONSTRAINT "hub_tier_changes_identity_id_hub_identities_id_fk" FOREIGN KEY ("identity_id") REFERENCES "public"."hub_identities"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "hub_verification_methods" ADD CONSTRAINT "hub_verification_methods_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "hub_verification_methods" ADD CONSTRAINT "hub_verification_methods_identity_id_hub_identities_id_fk" FOREIGN KEY ("identity_id") REFERENCES "public"."hub_identities"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "issued_credentials" ADD CONSTRAINT "issued_credentials_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "issued_credentials" ADD CONSTRAINT "issued_credentials_identity_id_hub_identities_id_fk" FOREIGN KEY ("identity_id") REFERENCES "public"."hub_identities"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "hub_capabilities_name_idx" ON "hub_capabilities" USING btree ("identity_id","name","version");--> statement-breakpoint
CREATE INDEX "hub_tier_changes_identity_idx" ON "hub_tier_changes" USING btree ("identity_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "hub_verification_methods_key_idx" ON "hub_verification_methods" USING btree ("identity_id","key_id");--> statement-breakpoint
CREATE INDEX "issued_credentials_tenant_idx" ON "issued_credentials" USING btree ("tenant_id");--> statement-breakpoint
CREATE INDEX "hub_identities_search_idx" ON "hub_identities" USING gin ("search_document");
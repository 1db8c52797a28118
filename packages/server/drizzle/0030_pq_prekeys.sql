CREATE TABLE "pq_prekeys" (
	"id" uuid PRIMARY KEY NOT NULL,
	"tenant_id" uuid NOT NULL,
	"device_id" uuid NOT NULL,
	"key_id" text NOT NULL,
	"public_key" "bytea" NOT NULL,
	"signature" "bytea" NOT NULL,
	"last_resort" boolean NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"claimed_at" timestamp with time zone,
	"claimed_by" uuid
);
--> statement-breakpoint
ALTER TABLE "mls_key_packages" ADD COLUMN "cipher_suite" integer DEFAULT 3 NOT NULL;--> statement-breakpoint
ALTER TABLE "pq_prekeys" ADD CONSTRAINT "pq_prekeys_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pq_prekeys" ADD CONSTRAINT "pq_prekeys_device_id_devices_id_fk" FOREIGN KEY ("device_id") REFERENCES "public"."devices"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "pq_prekeys_last_resort_idx" ON "pq_prekeys" USING btree ("device_id") WHERE last_resort;--> statement-breakpoint
CREATE INDEX "pq_prekeys_one_time_available_idx" ON "pq_prekeys" USING btree ("device_id","created_at") WHERE claimed_at is null and not last_resort;--> statement-breakpoint
-- Row-level security for pq_prekeys (design §4): the policy of 0001_rls.sql.
SELECT parley_enable_tenant_rls('pq_prekeys'::regclass);

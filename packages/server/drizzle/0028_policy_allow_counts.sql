CREATE TABLE "policy_allow_counts" (
	"id" uuid PRIMARY KEY NOT NULL,
	"tenant_id" uuid NOT NULL,
	"subject_kind" text NOT NULL,
	"sender_device_id" uuid NOT NULL,
	"allows" integer NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "policy_epochs" (
	"tenant_id" uuid PRIMARY KEY NOT NULL,
	"epoch" bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "policy_allow_counts" ADD CONSTRAINT "policy_allow_counts_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "policy_allow_counts_sender_idx" ON "policy_allow_counts" USING btree ("tenant_id","sender_device_id","created_at");
CREATE TABLE "audit_checkpoints" (
	"tenant_id" uuid NOT NULL,
	"tree_size" bigint NOT NULL,
	"key_id" text NOT NULL,
	"root_hash" "bytea" NOT NULL,
	"note" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "audit_checkpoints_tenant_id_tree_size_key_id_pk" PRIMARY KEY("tenant_id","tree_size","key_id")
);
--> statement-breakpoint
CREATE TABLE "audit_tree_nodes" (
	"tenant_id" uuid NOT NULL,
	"level" smallint NOT NULL,
	"idx" bigint NOT NULL,
	"hash" "bytea" NOT NULL,
	CONSTRAINT "audit_tree_nodes_tenant_id_level_idx_pk" PRIMARY KEY("tenant_id","level","idx")
);
--> statement-breakpoint
ALTER TABLE "platform_keys" ADD COLUMN "key_name" text;--> statement-breakpoint
ALTER TABLE "audit_checkpoints" ADD CONSTRAINT "audit_checkpoints_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "audit_tree_nodes" ADD CONSTRAINT "audit_tree_nodes_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;
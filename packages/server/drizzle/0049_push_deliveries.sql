-- The push outbox (design §8.36 "Push delivery"): one row per (push registration, event kind), the
-- collapse window of that pair, claimed by the push worker with FOR UPDATE SKIP LOCKED.
CREATE TABLE "push_deliveries" (
	"push_token_id" uuid NOT NULL,
	"kind" text NOT NULL,
	"tenant_id" uuid NOT NULL,
	"device_id" uuid NOT NULL,
	"payload" jsonb NOT NULL,
	"count" integer DEFAULT 0 NOT NULL,
	"sending_count" integer DEFAULT 0 NOT NULL,
	"urgent" boolean DEFAULT false NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_sent_at" timestamp with time zone,
	"last_status" integer,
	"last_error" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "push_deliveries_push_token_id_kind_pk" PRIMARY KEY("push_token_id","kind")
);
--> statement-breakpoint
ALTER TABLE "push_deliveries" ADD CONSTRAINT "push_deliveries_push_token_id_push_tokens_id_fk" FOREIGN KEY ("push_token_id") REFERENCES "public"."push_tokens"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "push_deliveries" ADD CONSTRAINT "push_deliveries_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "push_deliveries" ADD CONSTRAINT "push_deliveries_device_id_devices_id_fk" FOREIGN KEY ("device_id") REFERENCES "public"."devices"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "push_deliveries_due_idx" ON "push_deliveries" USING btree ("next_attempt_at") WHERE status = 'pending';--> statement-breakpoint
-- Row-level security (design §4): the tenant policy of 0001_rls.sql.
SELECT parley_enable_tenant_rls('push_deliveries'::regclass);

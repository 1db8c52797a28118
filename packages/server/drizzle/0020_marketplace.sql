CREATE TABLE "marketplace_connected_accounts" (
	"tenant_id" uuid PRIMARY KEY NOT NULL,
	"processor" text NOT NULL,
	"account_id" text NOT NULL,
	"status" text DEFAULT 'onboarding' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "ledger_entries" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "ledger_entries_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"transaction_id" uuid NOT NULL,
	"account" text NOT NULL,
	"party_tenant_id" uuid,
	"amount_cents" bigint NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "ledger_transactions" (
	"id" uuid PRIMARY KEY NOT NULL,
	"seq" bigint GENERATED ALWAYS AS IDENTITY (sequence name "ledger_transactions_seq_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"kind" text NOT NULL,
	"reference" text NOT NULL,
	"rental_id" uuid,
	"payout_id" uuid,
	"memo" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "marketplace_dispute_notes" (
	"id" uuid PRIMARY KEY NOT NULL,
	"tenant_id" uuid NOT NULL,
	"partner_tenant_id" uuid NOT NULL,
	"dispute_id" uuid NOT NULL,
	"author_tenant_id" uuid NOT NULL,
	"author" text NOT NULL,
	"note" text NOT NULL,
	"evidence_refs" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "marketplace_disputes" (
	"id" uuid PRIMARY KEY NOT NULL,
	"tenant_id" uuid NOT NULL,
	"partner_tenant_id" uuid NOT NULL,
	"rental_id" uuid NOT NULL,
	"filed_by_tenant_id" uuid NOT NULL,
	"filed_by" text NOT NULL,
	"reason" text NOT NULL,
	"evidence_refs" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"status" text DEFAULT 'open' NOT NULL,
	"outcome" text,
	"amount_cents" integer,
	"resolution_note" text,
	"resolved_by" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"resolved_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "marketplace_listings" (
	"id" uuid PRIMARY KEY NOT NULL,
	"tenant_id" uuid NOT NULL,
	"workspace_id" uuid,
	"identity_id" uuid NOT NULL,
	"hub_address" text NOT NULL,
	"title" text NOT NULL,
	"description" text DEFAULT '' NOT NULL,
	"category" text NOT NULL,
	"capabilities" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"pricing_model" text NOT NULL,
	"price_cents" integer NOT NULL,
	"currency" text DEFAULT 'usd' NOT NULL,
	"sla" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"term_hours" integer,
	"min_tier" text DEFAULT 'certified' NOT NULL,
	"min_score" double precision,
	"status" text DEFAULT 'draft' NOT NULL,
	"trust_tier" text DEFAULT 'unverified' NOT NULL,
	"trust_score" double precision,
	"search_document" "tsvector",
	"created_by" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"published_at" timestamp with time zone,
	"delisted_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "marketplace_payouts" (
	"id" uuid PRIMARY KEY NOT NULL,
	"tenant_id" uuid NOT NULL,
	"amount_cents" integer NOT NULL,
	"currency" text DEFAULT 'usd' NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"processor" text NOT NULL,
	"account_id" text NOT NULL,
	"transfer_id" text,
	"failure_reason" text,
	"run_id" uuid NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"completed_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "marketplace_rental_messages" (
	"id" uuid PRIMARY KEY NOT NULL,
	"seq" bigint GENERATED ALWAYS AS IDENTITY (sequence name "marketplace_rental_messages_seq_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"tenant_id" uuid NOT NULL,
	"partner_tenant_id" uuid NOT NULL,
	"rental_id" uuid NOT NULL,
	"sender_device_id" uuid NOT NULL,
	"recipient_device_id" uuid NOT NULL,
	"header_blob" "bytea",
	"ciphertext" "bytea",
	"message_type" text NOT NULL,
	"priority" text NOT NULL,
	"outcome" text NOT NULL,
	"hold_reason" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"released_at" timestamp with time zone,
	"delivered_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "marketplace_rentals" (
	"id" uuid PRIMARY KEY NOT NULL,
	"tenant_id" uuid NOT NULL,
	"partner_tenant_id" uuid NOT NULL,
	"listing_id" uuid NOT NULL,
	"identity_id" uuid NOT NULL,
	"hub_address" text NOT NULL,
	"agent_device_id" uuid,
	"status" text DEFAULT 'pending' NOT NULL,
	"payment_method" text NOT NULL,
	"pricing_model" text NOT NULL,
	"price_cents" integer NOT NULL,
	"amount_cents" integer NOT NULL,
	"fee_cents" integer NOT NULL,
	"refunded_cents" integer DEFAULT 0 NOT NULL,
	"currency" text DEFAULT 'usd' NOT NULL,
	"term_hours" integer,
	"processor" text NOT NULL,
	"charge_id" text,
	"grant_id" uuid,
	"renter_device_id" uuid,
	"reason" text,
	"created_by" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"starts_at" timestamp with time zone,
	"ends_at" timestamp with time zone,
	"activated_at" timestamp with time zone,
	"suspended_at" timestamp with time zone,
	"ended_at" timestamp with time zone,
	"task_started_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "marketplace_payment_methods" (
	"tenant_id" uuid PRIMARY KEY NOT NULL,
	"payment_method" text NOT NULL,
	"set_by" text NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "processor_events" (
	"processor" text NOT NULL,
	"event_id" text NOT NULL,
	"type" text NOT NULL,
	"received_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "processor_events_processor_event_id_pk" PRIMARY KEY("processor","event_id")
);
--> statement-breakpoint
ALTER TABLE "held_messages" ADD COLUMN "rental_id" uuid;--> statement-breakpoint
ALTER TABLE "held_messages" ADD COLUMN "rental_message_id" uuid;--> statement-breakpoint
ALTER TABLE "hub_identities" ADD COLUMN "tier_source" text DEFAULT 'computed' NOT NULL;--> statement-breakpoint
ALTER TABLE "hub_identities" ADD COLUMN "tier_grant_reason" text;--> statement-breakpoint
ALTER TABLE "hub_identities" ADD COLUMN "tier_grant_expires_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "marketplace_connected_accounts" ADD CONSTRAINT "marketplace_connected_accounts_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ledger_entries" ADD CONSTRAINT "ledger_entries_transaction_id_ledger_transactions_id_fk" FOREIGN KEY ("transaction_id") REFERENCES "public"."ledger_transactions"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "marketplace_dispute_notes" ADD CONSTRAINT "marketplace_dispute_notes_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "marketplace_dispute_notes" ADD CONSTRAINT "marketplace_dispute_notes_partner_tenant_id_tenants_id_fk" FOREIGN KEY ("partner_tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "marketplace_dispute_notes" ADD CONSTRAINT "marketplace_dispute_notes_dispute_id_marketplace_disputes_id_fk" FOREIGN KEY ("dispute_id") REFERENCES "public"."marketplace_disputes"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "marketplace_disputes" ADD CONSTRAINT "marketplace_disputes_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "marketplace_disputes" ADD CONSTRAINT "marketplace_disputes_partner_tenant_id_tenants_id_fk" FOREIGN KEY ("partner_tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "marketplace_disputes" ADD CONSTRAINT "marketplace_disputes_rental_id_marketplace_rentals_id_fk" FOREIGN KEY ("rental_id") REFERENCES "public"."marketplace_rentals"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "marketplace_listings" ADD CONSTRAINT "marketplace_listings_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "marketplace_listings" ADD CONSTRAINT "marketplace_listings_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "marketplace_listings" ADD CONSTRAINT "marketplace_listings_identity_id_hub_identities_id_fk" FOREIGN KEY ("identity_id") REFERENCES "public"."hub_identities"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "marketplace_payouts" ADD CONSTRAINT "marketplace_payouts_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "marketplace_rental_messages" ADD CONSTRAINT "marketplace_rental_messages_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "marketplace_rental_messages" ADD CONSTRAINT "marketplace_rental_messages_partner_tenant_id_tenants_id_fk" FOREIGN KEY ("partner_tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "marketplace_rental_messages" ADD CONSTRAINT "marketplace_rental_messages_rental_id_marketplace_rentals_id_fk" FOREIGN KEY ("rental_id") REFERENCES "public"."marketplace_rentals"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "marketplace_rentals" ADD CONSTRAINT "marketplace_rentals_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "marketplace_rentals" ADD CONSTRAINT "marketplace_rentals_partner_tenant_id_tenants_id_fk" FOREIGN KEY ("partner_tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "marketplace_rentals" ADD CONSTRAINT "marketplace_rentals_listing_id_marketplace_listings_id_fk" FOREIGN KEY ("listing_id") REFERENCES "public"."marketplace_listings"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "marketplace_payment_methods" ADD CONSTRAINT "marketplace_payment_methods_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "ledger_entries_tx_idx" ON "ledger_entries" USING btree ("transaction_id");--> statement-breakpoint
CREATE INDEX "ledger_entries_account_idx" ON "ledger_entries" USING btree ("account","party_tenant_id");--> statement-breakpoint
CREATE UNIQUE INDEX "ledger_transactions_ref_idx" ON "ledger_transactions" USING btree ("kind","reference");--> statement-breakpoint
CREATE INDEX "marketplace_dispute_notes_dispute_idx" ON "marketplace_dispute_notes" USING btree ("dispute_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "marketplace_disputes_rental_idx" ON "marketplace_disputes" USING btree ("rental_id");--> statement-breakpoint
CREATE INDEX "marketplace_disputes_status_idx" ON "marketplace_disputes" USING btree ("status","created_at");--> statement-breakpoint
CREATE INDEX "marketplace_listings_tenant_idx" ON "marketplace_listings" USING btree ("tenant_id");--> statement-breakpoint
CREATE INDEX "marketplace_listings_status_idx" ON "marketplace_listings" USING btree ("status","published_at","id");--> statement-breakpoint
CREATE INDEX "marketplace_listings_search_idx" ON "marketplace_listings" USING gin ("search_document");--> statement-breakpoint
CREATE INDEX "marketplace_listings_capabilities_idx" ON "marketplace_listings" USING gin ("capabilities");--> statement-breakpoint
CREATE INDEX "marketplace_payouts_tenant_idx" ON "marketplace_payouts" USING btree ("tenant_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "marketplace_payouts_run_idx" ON "marketplace_payouts" USING btree ("run_id","tenant_id");--> statement-breakpoint
CREATE INDEX "marketplace_rental_messages_rental_idx" ON "marketplace_rental_messages" USING btree ("rental_id","seq");--> statement-breakpoint
CREATE INDEX "marketplace_rentals_tenant_idx" ON "marketplace_rentals" USING btree ("tenant_id","status");--> statement-breakpoint
CREATE INDEX "marketplace_rentals_partner_idx" ON "marketplace_rentals" USING btree ("partner_tenant_id","status");--> statement-breakpoint
CREATE INDEX "marketplace_rentals_identity_idx" ON "marketplace_rentals" USING btree ("identity_id","status");--> statement-breakpoint
CREATE INDEX "marketplace_rentals_ends_idx" ON "marketplace_rentals" USING btree ("status","ends_at");--> statement-breakpoint
CREATE UNIQUE INDEX "marketplace_rentals_charge_idx" ON "marketplace_rentals" USING btree ("processor","charge_id");
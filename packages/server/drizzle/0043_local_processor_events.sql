CREATE TABLE "local_processor_events" (
	"event_id" text PRIMARY KEY NOT NULL,
	"type" text NOT NULL,
	"data" jsonb NOT NULL,
	"deliver_at" timestamp with time zone NOT NULL,
	"delivered_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE INDEX "local_processor_events_pending_idx" ON "local_processor_events" USING btree ("deliver_at") WHERE delivered_at is null;--> statement-breakpoint
-- A platform table (processor ids and metadata, no tenant data), like scheduled_jobs: the embedded
-- processor reaches it through crossTenant; the application role gets no grant on it.
REVOKE ALL ON local_processor_events FROM parley_app;

CREATE TABLE "read_marks" (
	"tenant_id" uuid NOT NULL,
	"thread_id" uuid NOT NULL,
	"reader_device_id" uuid NOT NULL,
	"up_to" bigint NOT NULL,
	"read_at" timestamp with time zone NOT NULL,
	CONSTRAINT "read_marks_thread_id_reader_device_id_pk" PRIMARY KEY("thread_id","reader_device_id")
);
--> statement-breakpoint
CREATE TABLE "room_receipts" (
	"tenant_id" uuid NOT NULL,
	"room_message_id" uuid NOT NULL,
	"recipient_device_id" uuid NOT NULL,
	"received_at" timestamp with time zone NOT NULL,
	CONSTRAINT "room_receipts_room_message_id_recipient_device_id_pk" PRIMARY KEY("room_message_id","recipient_device_id")
);
--> statement-breakpoint
ALTER TABLE "devices" ADD COLUMN "read_receipts" boolean DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE "read_marks" ADD CONSTRAINT "read_marks_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "read_marks_tenant_idx" ON "read_marks" USING btree ("tenant_id");--> statement-breakpoint
-- Row-level security (design §4): the tenant policy of 0001_rls.sql.
SELECT parley_enable_tenant_rls('read_marks'::regclass);--> statement-breakpoint
SELECT parley_enable_tenant_rls('room_receipts'::regclass);--> statement-breakpoint
-- Deleting room messages deletes their envelopes (migration 0037) and now their delivered receipts.
CREATE OR REPLACE FUNCTION parley_delete_room_envelopes() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM room_envelopes e USING gone g WHERE e.room_message_id = g.id;
  DELETE FROM room_receipts r USING gone g WHERE r.room_message_id = g.id;
  RETURN NULL;
END $$;

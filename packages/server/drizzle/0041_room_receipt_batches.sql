CREATE TABLE "room_receipt_batches" (
	"tenant_id" uuid NOT NULL,
	"room_message_id" uuid NOT NULL,
	"recipient_device_ids" uuid[] NOT NULL,
	"received_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE INDEX "room_receipt_batches_message_idx" ON "room_receipt_batches" USING btree ("room_message_id");--> statement-breakpoint
-- The receipts recorded so far, one row per (room message, receipt time). The copy runs
-- as the tables' owner across tenants: lift FORCE on the old table for this statement only (as 0009).
ALTER TABLE room_receipts NO FORCE ROW LEVEL SECURITY;--> statement-breakpoint
INSERT INTO room_receipt_batches (tenant_id, room_message_id, recipient_device_ids, received_at)
  SELECT tenant_id, room_message_id, array_agg(recipient_device_id ORDER BY recipient_device_id), received_at
  FROM room_receipts GROUP BY tenant_id, room_message_id, received_at;--> statement-breakpoint
ALTER TABLE room_receipts FORCE ROW LEVEL SECURITY;--> statement-breakpoint
-- Row-level security (design §4): the tenant policy of 0001_rls.sql.
SELECT parley_enable_tenant_rls('room_receipt_batches'::regclass);--> statement-breakpoint
-- room_receipts stays for the previous release's instances during a rolling upgrade (docs/operations.md,
-- "Upgrades"); the next release copies what they wrote after this copy and drops it. Deleting room
-- messages deletes their envelopes (migration 0037) and their delivered receipts in both tables.
CREATE OR REPLACE FUNCTION parley_delete_room_envelopes() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM room_envelopes e USING gone g WHERE e.room_message_id = g.id;
  DELETE FROM room_receipts r USING gone g WHERE r.room_message_id = g.id;
  DELETE FROM room_receipt_batches r USING gone g WHERE r.room_message_id = g.id;
  RETURN NULL;
END $$;

CREATE TABLE "room_receipt_batches" (
	"tenant_id" uuid NOT NULL,
	"room_message_id" uuid NOT NULL,
	"recipient_device_ids" uuid[] NOT NULL,
	"received_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE INDEX "room_receipt_batches_message_idx" ON "room_receipt_batches" USING btree ("room_message_id");--> statement-breakpoint
-- Row-level security (DESIGN §4): the tenant policy of 0001_rls.sql.
SELECT parley_enable_tenant_rls('room_receipt_batches'::regclass);--> statement-breakpoint
-- The receipts recorded so far, one row per (room message, receipt time) (issue 21).
INSERT INTO room_receipt_batches (tenant_id, room_message_id, recipient_device_ids, received_at)
  SELECT tenant_id, room_message_id, array_agg(recipient_device_id ORDER BY recipient_device_id), received_at
  FROM room_receipts GROUP BY tenant_id, room_message_id, received_at;

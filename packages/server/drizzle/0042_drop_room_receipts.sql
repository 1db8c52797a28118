-- The rest of 0041: the previous release's instances wrote room envelope receipts into
-- room_receipts while a rolling upgrade replaced them (docs/operations.md, "Upgrades"). Copy the
-- receipts they recorded that no room_receipt_batches row names yet (a receipt stays recorded
-- once: an envelope an old and a new instance both recorded keeps its batch row), one row per
-- (room message, receipt time), then drop the old table. The copy runs as the tables' owner across
-- tenants: lift FORCE on both tables for it (as 0009 and 0041).
ALTER TABLE room_receipts NO FORCE ROW LEVEL SECURITY;--> statement-breakpoint
ALTER TABLE room_receipt_batches NO FORCE ROW LEVEL SECURITY;--> statement-breakpoint
INSERT INTO room_receipt_batches (tenant_id, room_message_id, recipient_device_ids, received_at)
  SELECT r.tenant_id, r.room_message_id, array_agg(r.recipient_device_id ORDER BY r.recipient_device_id), r.received_at
  FROM room_receipts r
  WHERE NOT EXISTS (
    SELECT 1 FROM room_receipt_batches b
    WHERE b.room_message_id = r.room_message_id AND r.recipient_device_id = ANY (b.recipient_device_ids))
  GROUP BY r.tenant_id, r.room_message_id, r.received_at;--> statement-breakpoint
ALTER TABLE room_receipt_batches FORCE ROW LEVEL SECURITY;--> statement-breakpoint
-- Deleting room messages deletes their envelopes (migration 0037) and their delivered receipts.
CREATE OR REPLACE FUNCTION parley_delete_room_envelopes() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM room_envelopes e USING gone g WHERE e.room_message_id = g.id;
  DELETE FROM room_receipt_batches r USING gone g WHERE r.room_message_id = g.id;
  RETURN NULL;
END $$;--> statement-breakpoint
DROP TABLE "room_receipts" CASCADE;

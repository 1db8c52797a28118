DROP TABLE "room_receipts" CASCADE;--> statement-breakpoint
-- Deleting room messages deletes their envelopes (migration 0037) and their delivered receipts (0041).
CREATE OR REPLACE FUNCTION parley_delete_room_envelopes() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM room_envelopes e USING gone g WHERE e.room_message_id = g.id;
  DELETE FROM room_receipt_batches r USING gone g WHERE r.room_message_id = g.id;
  RETURN NULL;
END $$;

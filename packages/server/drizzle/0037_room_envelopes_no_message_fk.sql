ALTER TABLE "room_envelopes" DROP CONSTRAINT "room_envelopes_room_message_id_room_messages_id_fk";
--> statement-breakpoint
-- The cascade the foreign key gave: deleting room messages (directly, or by the cascade from their
-- room or tenant) deletes their envelopes, once per statement (the key's per-envelope
-- check was the largest cost of a room message's write).
CREATE OR REPLACE FUNCTION parley_delete_room_envelopes() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM room_envelopes e USING gone g WHERE e.room_message_id = g.id;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER room_messages_delete_envelopes AFTER DELETE ON room_messages
  REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION parley_delete_room_envelopes();

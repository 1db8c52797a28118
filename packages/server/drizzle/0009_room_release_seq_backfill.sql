-- Release positions of room messages (design §8.5, docs/decisions.md "Rooms: member timelines by
-- release position"): grant the new sequence to the application role, backfill the positions of
-- existing rows, and drop MLS carrier ciphertexts nobody may read any more.
GRANT USAGE, SELECT ON SEQUENCE room_release_seq TO parley_app;
--> statement-breakpoint
-- The backfill runs as the tables' owner across tenants: lift FORCE for these statements only.
ALTER TABLE room_messages NO FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE room_envelopes NO FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
-- One release per message at its send (the sender's position, shared by the envelopes delivered or
-- notified then) and one per envelope released later (an approved held envelope: delivered_at
-- after the message's created_at), numbered in time order.
WITH events AS (
  SELECT m.id AS message_id, NULL::uuid AS envelope_id, m.created_at AS at, m.seq
  FROM room_messages m
  UNION ALL
  SELECT e.room_message_id, e.id, e.delivered_at, m.seq
  FROM room_envelopes e JOIN room_messages m ON m.id = e.room_message_id
  WHERE e.recipient_device_id IS NOT NULL AND e.outcome IN ('delivered', 'notified') AND e.delivered_at > m.created_at
), numbered AS (
  SELECT message_id, envelope_id, row_number() OVER (ORDER BY at, seq, envelope_id NULLS FIRST) AS pos FROM events
), messages AS (
  UPDATE room_messages m SET release_seq = n.pos FROM numbered n WHERE n.envelope_id IS NULL AND n.message_id = m.id RETURNING m.id, m.release_seq
)
UPDATE room_envelopes e
SET release_seq = coalesce((SELECT n.pos FROM numbered n WHERE n.envelope_id = e.id), (SELECT m.release_seq FROM messages m WHERE m.id = e.room_message_id))
WHERE e.recipient_device_id IS NOT NULL AND e.outcome IN ('delivered', 'notified');
--> statement-breakpoint
SELECT setval('room_release_seq', greatest((SELECT coalesce(max(release_seq), 0) FROM room_messages), (SELECT coalesce(max(release_seq), 0) FROM room_envelopes)) + 1, false);
--> statement-breakpoint
-- An MLS carrier (recipient null) whose recipient rows are all blocked (blocked, denied, expired)
-- keeps no ciphertext: drop the existing ones, and from now on when the last one is blocked.
UPDATE room_envelopes c SET header_blob = NULL, ciphertext = NULL
WHERE c.recipient_device_id IS NULL AND c.ciphertext IS NOT NULL
  AND NOT EXISTS (SELECT 1 FROM room_envelopes r WHERE r.room_message_id = c.room_message_id AND r.recipient_device_id IS NOT NULL AND r.outcome <> 'blocked');
--> statement-breakpoint
ALTER TABLE room_messages FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE room_envelopes FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION parley_drop_dead_room_carrier() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE room_envelopes c SET header_blob = NULL, ciphertext = NULL
  WHERE c.room_message_id = NEW.room_message_id AND c.recipient_device_id IS NULL AND c.ciphertext IS NOT NULL
    AND NOT EXISTS (SELECT 1 FROM room_envelopes r WHERE r.room_message_id = NEW.room_message_id AND r.recipient_device_id IS NOT NULL AND r.outcome <> 'blocked');
  RETURN NULL;
END $$;
--> statement-breakpoint
-- Fires for every path that blocks a recipient row (denial and expiry in the policy module, member
-- removal in the room module); row triggers run after the whole statement, so they see it all.
CREATE TRIGGER room_envelopes_drop_dead_carrier AFTER UPDATE OF outcome ON room_envelopes FOR EACH ROW
WHEN (NEW.recipient_device_id IS NOT NULL AND NEW.outcome = 'blocked' AND OLD.outcome IS DISTINCT FROM 'blocked')
EXECUTE FUNCTION parley_drop_dead_room_carrier();

CREATE SEQUENCE "public"."room_release_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1;--> statement-breakpoint
DROP INDEX "room_envelopes_recipient_idx";--> statement-breakpoint
ALTER TABLE "room_envelopes" ADD COLUMN "release_seq" bigint;--> statement-breakpoint
ALTER TABLE "room_messages" ADD COLUMN "release_seq" bigint;--> statement-breakpoint
CREATE INDEX "room_envelopes_recipient_idx" ON "room_envelopes" USING btree ("recipient_device_id","release_seq");
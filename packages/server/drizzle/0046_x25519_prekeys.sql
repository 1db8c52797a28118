-- X25519 prekeys of X3DH (Signal, revision 1, §3.2) share the PQ prekey table: `kind` tells a
-- PQXDH KEM prekey ('kem', every row before) from an X25519 one ('x25519'); the X25519 signed
-- prekey is the kind's `last_resort` row, and one-time X25519 prekeys carry no signature.
ALTER TABLE "pq_prekeys" ADD COLUMN "kind" text DEFAULT 'kem' NOT NULL;--> statement-breakpoint
ALTER TABLE "pq_prekeys" ALTER COLUMN "signature" DROP NOT NULL;--> statement-breakpoint
DROP INDEX "pq_prekeys_last_resort_idx";--> statement-breakpoint
DROP INDEX "pq_prekeys_one_time_available_idx";--> statement-breakpoint
CREATE UNIQUE INDEX "pq_prekeys_last_resort_idx" ON "pq_prekeys" USING btree ("device_id","kind") WHERE last_resort;--> statement-breakpoint
CREATE INDEX "pq_prekeys_one_time_available_idx" ON "pq_prekeys" USING btree ("device_id","kind","created_at") WHERE claimed_at is null and not last_resort;

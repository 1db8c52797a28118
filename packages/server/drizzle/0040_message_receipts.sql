CREATE TABLE "device_message_counts" (
	"tenant_id" uuid NOT NULL,
	"device_id" uuid NOT NULL,
	"kind" text NOT NULL,
	"n" bigint NOT NULL,
	CONSTRAINT "device_message_counts_device_id_kind_pk" PRIMARY KEY("device_id","kind")
);
--> statement-breakpoint
CREATE TABLE "message_receipts" (
	"message_id" uuid PRIMARY KEY NOT NULL,
	"tenant_id" uuid NOT NULL,
	"recipient_device_id" uuid NOT NULL,
	"delivered_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "device_message_counts" ADD CONSTRAINT "device_message_counts_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "device_message_counts_tenant_idx" ON "device_message_counts" USING btree ("tenant_id");--> statement-breakpoint
-- Delivered times move from the wide message rows to their narrow receipts (setting
-- messages.delivered_at was a non-HOT UPDATE per message), and the undelivered index gives way to
-- running counts per device. The copy runs as the tables' owner across tenants: lift FORCE on
-- messages for these statements only (as 0009).
ALTER TABLE "messages" NO FORCE ROW LEVEL SECURITY;--> statement-breakpoint
INSERT INTO "message_receipts" ("message_id", "tenant_id", "recipient_device_id", "delivered_at")
  SELECT "id", "tenant_id", "recipient_device_id", "delivered_at" FROM "messages" WHERE "delivered_at" IS NOT NULL;--> statement-breakpoint
INSERT INTO "device_message_counts" ("tenant_id", "device_id", "kind", "n")
  SELECT "tenant_id", "recipient_device_id", 'received', count(*) FROM "messages" GROUP BY 1, 2
  UNION ALL
  SELECT "tenant_id", "recipient_device_id", 'delivered', count(*) FROM "message_receipts" GROUP BY 1, 2;--> statement-breakpoint
ALTER TABLE "messages" FORCE ROW LEVEL SECURITY;--> statement-breakpoint
DROP INDEX "messages_undelivered_idx";--> statement-breakpoint
ALTER TABLE "messages" DROP COLUMN "delivered_at";--> statement-breakpoint
-- Row-level security (design §4): the tenant policy of 0001_rls.sql (in its 0039 form).
SELECT parley_enable_tenant_rls('message_receipts'::regclass);--> statement-breakpoint
SELECT parley_enable_tenant_rls('device_message_counts'::regclass);--> statement-breakpoint
-- Deleting messages (directly, or by the cascade from their conversation or tenant) deletes their
-- receipts and takes them off their recipients' counts, once per statement. The receipts have no
-- foreign key: its check would be one lookup per delivery on the relay's hot path.
CREATE OR REPLACE FUNCTION parley_delete_message_receipts() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  WITH receipts AS (
    DELETE FROM message_receipts r USING gone g WHERE r.message_id = g.id RETURNING r.recipient_device_id
  ), taken AS (
    SELECT recipient_device_id AS device_id, 'received' AS kind, count(*) AS k FROM gone GROUP BY 1
    UNION ALL
    SELECT recipient_device_id, 'delivered', count(*) FROM receipts GROUP BY 1
  )
  UPDATE device_message_counts c SET n = c.n - t.k FROM taken t WHERE c.device_id = t.device_id AND c.kind = t.kind;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER messages_delete_receipts AFTER DELETE ON messages
  REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION parley_delete_message_receipts();

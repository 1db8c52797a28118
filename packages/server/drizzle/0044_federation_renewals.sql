ALTER TABLE "federation_agreements" ADD COLUMN "renewal_expires_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "federation_agreements" ADD COLUMN "renewal_by" uuid;
-- The key directory (design §8.39): platform tables without tenant_id (db/schema/key-directory.ts).
CREATE TABLE "key_directory_entries" (
	"seq" bigint PRIMARY KEY NOT NULL,
	"vrf_index" bytea NOT NULL,
	"version" integer NOT NULL,
	"commitment" bytea NOT NULL,
	"opening" bytea NOT NULL,
	"prefix_root" bytea NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "key_directory_cosignatures" (
	"tree_size" bigint NOT NULL,
	"witness" text NOT NULL,
	"line" text NOT NULL,
	"root_hash" bytea NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "key_directory_cosignatures_tree_size_witness_pk" PRIMARY KEY("tree_size","witness")
);
--> statement-breakpoint
CREATE UNIQUE INDEX "key_directory_entries_index_version" ON "key_directory_entries" USING btree ("vrf_index","version");--> statement-breakpoint
-- The application role reads the log and appends to it in the transaction that stores the keys an
-- entry commits to; the cosignatures are written by the witness job (crossTenant) only.
REVOKE ALL ON key_directory_entries, key_directory_cosignatures FROM parley_app;
--> statement-breakpoint
GRANT SELECT, INSERT ON key_directory_entries TO parley_app;
--> statement-breakpoint
-- The log is append-only: an entry is never edited or removed.
CREATE OR REPLACE FUNCTION parley_key_directory_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'the key directory is append-only';
END $$;
--> statement-breakpoint
CREATE TRIGGER key_directory_entries_append_only BEFORE UPDATE OR DELETE ON key_directory_entries FOR EACH ROW EXECUTE FUNCTION parley_key_directory_append_only();

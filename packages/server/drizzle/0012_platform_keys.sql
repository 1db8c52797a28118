-- Platform table (no tenant_id, design §8.16): the application role gets no grant on it, like signing_keys.
CREATE TABLE "platform_keys" (
	"purpose" text PRIMARY KEY NOT NULL,
	"public_key_multibase" text NOT NULL,
	"private_key_multibase" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);

CREATE TABLE "device_presence" (
	"tenant_id" uuid NOT NULL,
	"device_id" uuid NOT NULL,
	"hour" timestamp with time zone NOT NULL,
	CONSTRAINT "device_presence_device_id_hour_pk" PRIMARY KEY("device_id","hour")
);
--> statement-breakpoint
CREATE TABLE "scheduled_jobs" (
	"name" text PRIMARY KEY NOT NULL,
	"next_run_at" timestamp with time zone NOT NULL,
	"last_run_at" timestamp with time zone,
	"last_run_by" text,
	"last_result" jsonb
);
--> statement-breakpoint
CREATE TABLE "shadow_observations" (
	"id" uuid PRIMARY KEY NOT NULL,
	"tenant_id" uuid NOT NULL,
	"session_id" uuid NOT NULL,
	"observation_id" text NOT NULL,
	"level" text NOT NULL,
	"agent_action" text NOT NULL,
	"agent_confidence" double precision,
	"agent_reasoning" text,
	"human_action" text NOT NULL,
	"human_notes" text,
	"agreed" boolean NOT NULL,
	"critical_miss" boolean DEFAULT false NOT NULL,
	"recorded_by" text NOT NULL,
	"recorded_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "shadow_sessions" (
	"id" uuid PRIMARY KEY NOT NULL,
	"tenant_id" uuid NOT NULL,
	"device_id" uuid NOT NULL,
	"skill_name" text NOT NULL,
	"decision_class" text NOT NULL,
	"min_observations" integer NOT NULL,
	"agreement_threshold" double precision NOT NULL,
	"critical_miss_window_hours" double precision NOT NULL,
	"level" text DEFAULT 'shadow' NOT NULL,
	"level_since" timestamp with time zone NOT NULL,
	"created_by" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "skill_grants" (
	"jti" uuid PRIMARY KEY NOT NULL,
	"tenant_id" uuid NOT NULL,
	"device_id" uuid NOT NULL,
	"subject" text NOT NULL,
	"skill" text NOT NULL,
	"tier" text NOT NULL,
	"audience" text NOT NULL,
	"issued_by" text NOT NULL,
	"issued_at" timestamp with time zone NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"revoked_at" timestamp with time zone,
	"revoked_reason" text
);
--> statement-breakpoint
CREATE TABLE "trust_baselines" (
	"tenant_id" uuid NOT NULL,
	"device_id" uuid NOT NULL,
	"dimension" text NOT NULL,
	"bins" jsonb NOT NULL,
	"samples" integer NOT NULL,
	"window_start" text NOT NULL,
	"window_end" text NOT NULL,
	"reason" text NOT NULL,
	"established_at" timestamp with time zone NOT NULL,
	"established_by" text NOT NULL,
	CONSTRAINT "trust_baselines_device_id_dimension_pk" PRIMARY KEY("device_id","dimension")
);
--> statement-breakpoint
CREATE TABLE "trust_daily_scores" (
	"tenant_id" uuid NOT NULL,
	"device_id" uuid NOT NULL,
	"day" text NOT NULL,
	"dimensions" jsonb NOT NULL,
	"computed_at" timestamp with time zone NOT NULL,
	CONSTRAINT "trust_daily_scores_device_id_day_pk" PRIMARY KEY("device_id","day")
);
--> statement-breakpoint
CREATE TABLE "trust_snapshots" (
	"id" uuid PRIMARY KEY NOT NULL,
	"tenant_id" uuid NOT NULL,
	"device_id" uuid NOT NULL,
	"window" text NOT NULL,
	"composite" double precision NOT NULL,
	"dimensions" jsonb NOT NULL,
	"sources" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"percentile" integer NOT NULL,
	"tier" text NOT NULL,
	"computed_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "device_presence" ADD CONSTRAINT "device_presence_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "shadow_observations" ADD CONSTRAINT "shadow_observations_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "shadow_observations" ADD CONSTRAINT "shadow_observations_session_id_shadow_sessions_id_fk" FOREIGN KEY ("session_id") REFERENCES "public"."shadow_sessions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "shadow_sessions" ADD CONSTRAINT "shadow_sessions_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "shadow_sessions" ADD CONSTRAINT "shadow_sessions_device_id_devices_id_fk" FOREIGN KEY ("device_id") REFERENCES "public"."devices"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "skill_grants" ADD CONSTRAINT "skill_grants_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "skill_grants" ADD CONSTRAINT "skill_grants_device_id_devices_id_fk" FOREIGN KEY ("device_id") REFERENCES "public"."devices"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "trust_baselines" ADD CONSTRAINT "trust_baselines_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "trust_baselines" ADD CONSTRAINT "trust_baselines_device_id_devices_id_fk" FOREIGN KEY ("device_id") REFERENCES "public"."devices"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "trust_daily_scores" ADD CONSTRAINT "trust_daily_scores_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "trust_daily_scores" ADD CONSTRAINT "trust_daily_scores_device_id_devices_id_fk" FOREIGN KEY ("device_id") REFERENCES "public"."devices"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "trust_snapshots" ADD CONSTRAINT "trust_snapshots_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "trust_snapshots" ADD CONSTRAINT "trust_snapshots_device_id_devices_id_fk" FOREIGN KEY ("device_id") REFERENCES "public"."devices"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "device_presence_tenant_idx" ON "device_presence" USING btree ("tenant_id","hour");--> statement-breakpoint
CREATE UNIQUE INDEX "shadow_observations_id_idx" ON "shadow_observations" USING btree ("session_id","observation_id");--> statement-breakpoint
CREATE INDEX "shadow_observations_session_idx" ON "shadow_observations" USING btree ("session_id","recorded_at");--> statement-breakpoint
CREATE INDEX "shadow_sessions_device_idx" ON "shadow_sessions" USING btree ("tenant_id","device_id");--> statement-breakpoint
CREATE INDEX "skill_grants_device_idx" ON "skill_grants" USING btree ("tenant_id","device_id","expires_at");--> statement-breakpoint
CREATE INDEX "trust_baselines_tenant_idx" ON "trust_baselines" USING btree ("tenant_id");--> statement-breakpoint
CREATE INDEX "trust_daily_scores_tenant_idx" ON "trust_daily_scores" USING btree ("tenant_id","device_id","day");--> statement-breakpoint
CREATE INDEX "trust_snapshots_device_idx" ON "trust_snapshots" USING btree ("tenant_id","device_id","window","computed_at");
CREATE TABLE "telemetry_rollup_dirty" (
	"tenant_id" uuid NOT NULL,
	"device_id" uuid NOT NULL,
	"day" date NOT NULL,
	"marked_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "telemetry_rollup_dirty_tenant_id_device_id_day_pk" PRIMARY KEY("tenant_id","device_id","day")
);
--> statement-breakpoint
CREATE TABLE "telemetry_span_rollups" (
	"tenant_id" uuid NOT NULL,
	"day" date NOT NULL,
	"device_id" uuid NOT NULL,
	"spans" integer NOT NULL,
	"error_spans" integer NOT NULL,
	"tasks" integer NOT NULL,
	"tasks_ok" integer NOT NULL,
	"tools" integer NOT NULL,
	"tools_ok" integer NOT NULL,
	"task_tokens" double precision NOT NULL,
	"task_tokens_ok" double precision NOT NULL,
	"recovered_errors" integer NOT NULL,
	"span_names" jsonb NOT NULL,
	"versions" jsonb NOT NULL,
	"rolled_up_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "telemetry_span_rollups_tenant_id_day_device_id_pk" PRIMARY KEY("tenant_id","day","device_id")
);
--> statement-breakpoint
ALTER TABLE "telemetry_rollup_dirty" ADD CONSTRAINT "telemetry_rollup_dirty_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "telemetry_span_rollups" ADD CONSTRAINT "telemetry_span_rollups_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;
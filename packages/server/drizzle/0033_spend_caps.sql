CREATE TABLE "agent_spend_alerts" (
	"tenant_id" uuid NOT NULL,
	"device_id" uuid NOT NULL,
	"period" text NOT NULL,
	"period_start" date NOT NULL,
	"threshold" smallint NOT NULL,
	"fired_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "agent_spend_alerts_tenant_id_device_id_period_period_start_threshold_pk" PRIMARY KEY("tenant_id","device_id","period","period_start","threshold")
);
--> statement-breakpoint
CREATE TABLE "agent_spend_caps" (
	"tenant_id" uuid NOT NULL,
	"device_id" uuid NOT NULL,
	"unit" text NOT NULL,
	"daily_limit" bigint,
	"monthly_limit" bigint,
	"updated_by" text NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "agent_spend_caps_tenant_id_device_id_pk" PRIMARY KEY("tenant_id","device_id"),
	CONSTRAINT "agent_spend_caps_unit_check" CHECK ("agent_spend_caps"."unit" in ('tokens', 'cents'))
);
--> statement-breakpoint
CREATE TABLE "telemetry_token_rollups" (
	"tenant_id" uuid NOT NULL,
	"device_id" uuid NOT NULL,
	"day" date NOT NULL,
	"model" text NOT NULL,
	"input_tokens" bigint NOT NULL,
	"output_tokens" bigint NOT NULL,
	CONSTRAINT "telemetry_token_rollups_tenant_id_device_id_day_model_pk" PRIMARY KEY("tenant_id","device_id","day","model")
);
--> statement-breakpoint
ALTER TABLE "agent_spend_alerts" ADD CONSTRAINT "agent_spend_alerts_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agent_spend_alerts" ADD CONSTRAINT "agent_spend_alerts_device_id_devices_id_fk" FOREIGN KEY ("device_id") REFERENCES "public"."devices"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agent_spend_caps" ADD CONSTRAINT "agent_spend_caps_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agent_spend_caps" ADD CONSTRAINT "agent_spend_caps_device_id_devices_id_fk" FOREIGN KEY ("device_id") REFERENCES "public"."devices"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "telemetry_token_rollups" ADD CONSTRAINT "telemetry_token_rollups_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;
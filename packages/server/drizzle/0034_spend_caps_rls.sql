-- Row-level security for the tenant tables of 0033 (design §4): the policy of 0001_rls.sql.
SELECT parley_enable_tenant_rls(t::regclass) FROM unnest(ARRAY['agent_spend_caps','agent_spend_alerts','telemetry_token_rollups']) AS t;
--> statement-breakpoint
-- Token roll-ups of the spans already stored, for every closed UTC day (modules/spend/rollups.ts
-- defines the same sums: a numeric `gen_ai.usage.input_tokens` / `output_tokens`, the model from
-- `gen_ai.request.model`, else `gen_ai.response.model`, else `unknown`). Pairs still marked dirty
-- are rebuilt by the next trust roll-up anyway; days whose raw spans were pruned stay without.
INSERT INTO telemetry_token_rollups (tenant_id, device_id, day, model, input_tokens, output_tokens)
SELECT tenant_id, device_id, (start_time AT TIME ZONE 'UTC')::date,
       coalesce(nullif(attributes->>'gen_ai.request.model', ''), nullif(attributes->>'gen_ai.response.model', ''), 'unknown'),
       coalesce(sum(CASE WHEN attributes->>'gen_ai.usage.input_tokens' ~ '^[0-9]+(\.[0-9]+)?$' THEN (attributes->>'gen_ai.usage.input_tokens')::float8 END), 0)::bigint,
       coalesce(sum(CASE WHEN attributes->>'gen_ai.usage.output_tokens' ~ '^[0-9]+(\.[0-9]+)?$' THEN (attributes->>'gen_ai.usage.output_tokens')::float8 END), 0)::bigint
FROM telemetry_spans
WHERE start_time < date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'
  AND (attributes->>'gen_ai.usage.input_tokens' ~ '^[0-9]+(\.[0-9]+)?$' OR attributes->>'gen_ai.usage.output_tokens' ~ '^[0-9]+(\.[0-9]+)?$')
GROUP BY 1, 2, 3, 4
ON CONFLICT DO NOTHING;

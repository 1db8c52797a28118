/**
 * SQL over the flattened jsonb `attributes` of `telemetry_spans`: the ONE
 * classification of a stored span, shared by the trust roll-ups (modules/trust/rollups.ts), the
 * spend roll-ups (modules/spend/rollups.ts) and the telemetry summary (modules/telemetry/repo.ts).
 * Two vocabularies mean the same thing (docs/trust-scoring.md, "Span vocabularies"):
 *
 * | meaning     | Parley span            | OpenTelemetry GenAI semantic conventions (gen_ai.operation.name)   |
 * |-------------|------------------------|--------------------------------------------------------------------|
 * | task        | name `svc.task`        | `invoke_agent`                                                      |
 * | tool call   | name `svc.tool`        | `execute_tool` (tool: `gen_ai.tool.name`)                           |
 * | model call  | —                      | `chat`, `text_completion`, `generate_content`                      |
 * | failed      | status ERROR           | status ERROR, or a non-empty `error.type`                          |
 * | tokens      | `svc.tokens`           | `gen_ai.usage.input_tokens` + `gen_ai.usage.output_tokens`         |
 * | model       | —                      | `gen_ai.request.model`, else `gen_ai.response.model`               |
 *
 * Every fragment reads the row's columns unqualified (`name`, `status_code`, `attributes`): use
 * it in a query over `telemetry_spans` alone (an alias is fine). Each costs one or two jsonb key
 * lookups per span, no join.
 */
import { sql, type SQL } from 'drizzle-orm';

/**
 * A numeric span attribute (the text of a JSON number, or a string of digits: otlp.ts stores an
 * int64 beyond 2^53 as a string), else null; negative or non-numeric values count as absent.
 * `key` is a constant of the caller (inlined), and `attributes` is read unqualified.
 */
export const numAttr = (key: string): SQL => sql.raw(`(case when attributes->>'${key}' ~ '^[0-9]+(\\.[0-9]+)?$' then (attributes->>'${key}')::float8 end)`);

/** Span roles of {@link SPAN_ROLE}: 0 other, 1 task, 2 tool call, 3 model call. */
export const SPAN_ROLES = { other: 0, task: 1, tool: 2, model: 3 } as const;

/**
 * The span's role, an integer of {@link SPAN_ROLES}: the name `svc.task` / `svc.tool` first (no
 * attribute read), else `gen_ai.operation.name` per the OpenTelemetry GenAI semantic conventions
 * (`invoke_agent` task, `execute_tool` tool call, `chat` / `text_completion` / `generate_content`
 * model call), else 0.
 */
export const SPAN_ROLE: SQL = sql.raw(`(case name when 'svc.task' then 1 when 'svc.tool' then 2 else
  case attributes->>'gen_ai.operation.name' when 'invoke_agent' then 1 when 'execute_tool' then 2
    when 'chat' then 3 when 'text_completion' then 3 when 'generate_content' then 3 else 0 end end)`);

/**
 * The span failed (boolean): OTLP status ERROR (code 2), or a non-empty `error.type` attribute
 * (OpenTelemetry semantic conventions, "Recording errors": `error.type` is set when the operation
 * ended in an error).
 */
export const SPAN_FAILED: SQL = sql.raw(`(status_code = 2 or coalesce(attributes->>'error.type', '') <> '')`);

/** Input tokens of a span (`gen_ai.usage.input_tokens`), else null. */
export const INPUT_TOKENS: SQL = numAttr('gen_ai.usage.input_tokens');
/** Output tokens of a span (`gen_ai.usage.output_tokens`), else null. */
export const OUTPUT_TOKENS: SQL = numAttr('gen_ai.usage.output_tokens');
/** The span reports GenAI token usage (either attribute). */
export const HAS_USAGE: SQL = sql`(${INPUT_TOKENS} is not null or ${OUTPUT_TOKENS} is not null)`;

/**
 * Tokens of a span (docs/decisions.md "Trust engine"): `gen_ai.usage.input_tokens` +
 * `gen_ai.usage.output_tokens` when either is present (a missing one counts 0), else `svc.tokens`,
 * else 0.
 */
export const SPAN_TOKENS: SQL = sql`coalesce(case when ${HAS_USAGE}
  then coalesce(${INPUT_TOKENS}, 0) + coalesce(${OUTPUT_TOKENS}, 0)
  else ${numAttr('svc.tokens')} end, 0)`;

/** The model of a span: `gen_ai.request.model`, else `gen_ai.response.model` (empty counts as absent), else `unknown`. */
export const SPAN_MODEL: SQL = sql`coalesce(nullif(attributes->>'gen_ai.request.model', ''), nullif(attributes->>'gen_ai.response.model', ''), 'unknown')`;

/**
 * Spend caps per agent (docs/decisions.md "Spend caps"): an owner caps each agent's
 * daily and monthly spend, in tokens or in cents; spend comes from the agents' telemetry spans
 * (OpenTelemetry GenAI `gen_ai.usage.input_tokens` / `output_tokens`, `gen_ai.request.model`),
 * priced in cents by the tenant's `model_prices` setting. Periods are UTC: a day is a UTC calendar
 * day, a month a UTC calendar month. The skill pipeline's `budget` stage refuses an agent at or over
 * a cap; at 80 % and 100 % of a cap the owners get one `spend_alert` event (socket and webhook
 * `spend.alert`) per (agent, period, threshold).
 */
import { Type, type Static } from '@sinclair/typebox';
import { defineRoute } from '../contract.js';
import { lit, Nullable, refuseUnknownKeys, Timestamp, Uuid } from '../common.js';

/** The unit of a cap: tokens (input + output) or cents (priced by the `model_prices` setting). */
export const SPEND_UNITS = ['tokens', 'cents'] as const;
export type SpendUnit = (typeof SPEND_UNITS)[number];

/** Cap periods: the UTC calendar day and the UTC calendar month. */
export const SPEND_PERIODS = ['day', 'month'] as const;
export type SpendPeriod = (typeof SPEND_PERIODS)[number];

/** Percentages of a cap at which the owners are alerted (once per agent, period and threshold). */
export const SPEND_ALERT_THRESHOLDS = [80, 100] as const;
export type SpendAlertThreshold = (typeof SPEND_ALERT_THRESHOLDS)[number];

/** Largest cap (tokens or cents): 10^15, well inside a double's exact integers. */
export const MAX_SPEND_LIMIT = 1e15;

const Limit = Type.Integer({ minimum: 1, maximum: MAX_SPEND_LIMIT, description: 'in the cap unit; null = no cap for this period' });

/** `{hub_id}`: the agent's device id or hub address (design §8.18), as in telemetry routes. */
export const SpendAgentParams = Type.Object({ hub_id: Type.String({ minLength: 1, maxLength: 255, description: 'agent device_id or hub address' }) });
export type SpendAgentParams = Static<typeof SpendAgentParams>;

/** An agent's caps (`GET/PUT /agents/{hub_id}/spend-cap`); an agent without caps answers unit `tokens`, both limits null. */
export const SpendCap = Type.Object({
  agent_id: Uuid,
  unit: lit(SPEND_UNITS),
  daily_limit: Nullable(Limit),
  monthly_limit: Nullable(Limit),
  updated_by: Nullable(Type.String()),
  updated_at: Nullable(Timestamp),
});
export type SpendCap = Static<typeof SpendCap>;

/** `PUT /agents/{hub_id}/spend-cap` body: replaces the caps; a missing or null limit is no cap; both null removes the caps. */
export const SetSpendCapRequest = refuseUnknownKeys(
  Type.Object(
    {
      unit: lit(SPEND_UNITS),
      daily_limit: Type.Optional(Nullable(Limit)),
      monthly_limit: Type.Optional(Nullable(Limit)),
    },
    { additionalProperties: false },
  ),
);
export type SetSpendCapRequest = Static<typeof SetSpendCapRequest>;

/** One model's usage in a period; `cents` null when the price table has no price for it (nor `*`). */
export const ModelSpend = Type.Object({
  model: Type.String({ description: '`gen_ai.request.model` (else `gen_ai.response.model`, else `unknown`)' }),
  input_tokens: Type.Integer(),
  output_tokens: Type.Integer(),
  cents: Nullable(Type.Number()),
});
export type ModelSpend = Static<typeof ModelSpend>;

/** Spend of one period (UTC day or month) against its cap. */
export const PeriodSpend = Type.Object({
  period: lit(SPEND_PERIODS),
  /** First day of the period, `YYYY-MM-DD` (UTC). */
  start: Type.String({ format: 'date' }),
  /** When the next period starts (UTC midnight). */
  resets_at: Timestamp,
  tokens: Type.Integer({ description: 'input + output tokens' }),
  cents: Type.Number({ description: 'priced tokens only' }),
  unpriced_tokens: Type.Integer({ description: 'tokens of models without a price (count 0 cents)' }),
  limit: Nullable(Type.Integer({ description: 'the cap in the agent cap unit; null = no cap' })),
  /** Spend in the cap unit (tokens or cents). */
  used: Type.Number(),
  /** used / limit × 100, null without a cap. */
  percent: Nullable(Type.Number()),
  /** At or over the cap: the budget stage refuses. */
  over: Type.Boolean(),
  models: Type.Array(ModelSpend),
});
export type PeriodSpend = Static<typeof PeriodSpend>;

/** `GET /agents/{hub_id}/spend`: an agent's spend today and this month (UTC) against its caps. */
export const AgentSpend = Type.Object({
  agent_id: Uuid,
  hub_address: Nullable(Type.String()),
  unit: lit(SPEND_UNITS),
  day: PeriodSpend,
  month: PeriodSpend,
  as_of: Timestamp,
});
export type AgentSpend = Static<typeof AgentSpend>;

/** Totals of one period over the fleet. */
export const SpendTotals = Type.Object({ tokens: Type.Integer(), cents: Type.Number(), unpriced_tokens: Type.Integer(), agents_over: Type.Integer() });
export type SpendTotals = Static<typeof SpendTotals>;

/** `GET /spend`: every agent of the tenant (by device id), and the fleet totals of today and this month. */
export const FleetSpend = Type.Object({
  as_of: Timestamp,
  agents: Type.Array(AgentSpend),
  totals: Type.Object({ day: SpendTotals, month: SpendTotals }),
});
export type FleetSpend = Static<typeof FleetSpend>;

/** `spend_alert` event data (owner sockets; webhook `spend.alert`): a status_alert-style notice, once per agent, period and threshold. */
export const SpendAlertEvent = Type.Object({
  agent_id: Uuid,
  period: lit(SPEND_PERIODS),
  period_start: Type.String({ format: 'date' }),
  threshold: Type.Integer({ description: '80 or 100 (percent of the cap)' }),
  unit: lit(SPEND_UNITS),
  limit: Type.Integer(),
  used: Type.Number(),
  severity: lit(['warning', 'critical'] as const),
  category: Type.Literal('performance'),
  title: Type.String(),
  message: Type.String(),
});
export type SpendAlertEvent = Static<typeof SpendAlertEvent>;

const tags = ['spend'];

export const spendRoutes = {
  getAgentSpendCap: defineRoute({
    method: 'GET',
    path: '/api/v1/agents/{hub_id}/spend-cap',
    auth: 'owner',
    tags,
    summary: "An agent's daily and monthly spend caps",
    description:
      'An agent\'s daily and monthly spend caps and their unit (`tokens` or `cents`); null limits when none is set. 404 when `{hub_id}` (a device id or hub address) names no agent of the tenant.',
    params: SpendAgentParams,
    responses: { 200: SpendCap },
    errors: [401, 403, 404],
  }),
  setAgentSpendCap: defineRoute({
    method: 'PUT',
    path: '/api/v1/agents/{hub_id}/spend-cap',
    auth: 'owner',
    tags,
    summary: "Set an agent's daily and monthly spend caps (tokens or cents); both null removes them",
    description:
      'Replaces an agent\'s daily and monthly caps in `unit` (`tokens` or `cents`, priced with the tenant\'s `model_prices`); a null limit means no cap for that period and both null remove the caps. Once a cap is reached the skill pipeline\'s budget stage refuses invocations, and owners receive `spend_alert` as thresholds are crossed. Audited as `spend.cap_set`; answers the caps. 404 when `{hub_id}` (a device id or hub address) names no agent of the tenant.',
    params: SpendAgentParams,
    body: SetSpendCapRequest,
    responses: { 200: SpendCap },
    errors: [400, 401, 403, 404],
  }),
  getAgentSpend: defineRoute({
    method: 'GET',
    path: '/api/v1/agents/{hub_id}/spend',
    auth: 'owner',
    tags,
    summary: "An agent's spend today and this month (UTC) against its caps",
    description:
      'An agent\'s spend today and this month (UTC) in its caps\' unit, against those caps, from the model usage its telemetry reports. 404 when `{hub_id}` (a device id or hub address) names no agent of the tenant.',
    params: SpendAgentParams,
    responses: { 200: AgentSpend },
    errors: [401, 403, 404],
  }),
  getFleetSpend: defineRoute({
    method: 'GET',
    path: '/api/v1/spend',
    auth: 'owner',
    tags,
    summary: "Every agent's spend today and this month against its caps, and the fleet totals",
    description: 'Every agent\'s spend today and this month (UTC) against its caps, with the fleet\'s totals.',
    responses: { 200: FleetSpend },
    errors: [401, 403],
  }),
};

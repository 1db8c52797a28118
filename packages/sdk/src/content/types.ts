/**
 * Structured content types carried inside the ciphertext (contract §2.4 "Structured content types",
 * defined by clients; the service never sees them). A plaintext is the UTF-8 JSON envelope
 * `{type, payload}`; `type` names one of the schemas below and `payload` must validate against it.
 *
 * | type                 | payload (required fields marked *)                                                  |
 * |----------------------|--------------------------------------------------------------------------------------|
 * | decision_request     | title*, description, options[]* {option_id*, label*, risk_level*, is_default}, deadline, auto_action {resolution*, option_id} |
 * | status_alert         | title*, severity*, message, detail, detailFormat, category                          |
 * | action_confirmation  | action*, status*, detail                                                             |
 * | artifact             | type*, title*, content*, format                                                      |
 * | heartbeat            | agent_status*, current_task                                                          |
 * | text                 | text* (SDK addition: a plain text message in the same envelope)                     |
 *
 * Decisions where contract §2.4 is silent: which fields besides decision_request's are required (as
 * marked above); `auto_action` follows design §8.19 (`{resolution: "approve" | "deny",
 * option_id?}`) and needs a `deadline`; option ids are unique, at most one option is the default,
 * and `auto_action.option_id` names an option; timestamps are ISO 8601 date-times with a zone.
 * Unknown extra fields are accepted and kept (forward compatibility); unknown `type`s are refused.
 */
import { AutoAction, DecisionOption, lit, RISK_LEVELS, type RiskLevel } from '@parley/protocol';
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';

const NonEmpty = Type.String({ minLength: 1 });
/** ISO 8601 date-time with a zone, e.g. `2026-01-31T12:00:00Z` (also checked with Date.parse). */
const IsoDateTime = Type.String({
  pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,9})?)?(Z|[+-]\\d{2}:?\\d{2})$',
  description: 'ISO 8601 date-time with a zone',
});

/** Risk level of a decision option (contract §2.4). */
export const RiskLevelSchema = lit(RISK_LEVELS);
/** `low` | `medium` | `high` | `critical`. */
export type { RiskLevel };

/** One option of a decision request (contract §2.4): the wire contract's `DecisionOption`. */
export const DecisionOptionSchema = DecisionOption;
/** What fires when a decision's deadline passes (contract §2.4, design §8.19): the wire contract's `AutoAction`. */
export const AutoActionSchema = AutoAction;
export type { AutoAction, DecisionOption };

/** `decision_request` payload (contract §2.4, §2.16): title and at least one option are required. */
export const DecisionRequestSchema = Type.Object({
  title: NonEmpty,
  description: Type.Optional(Type.String()),
  options: Type.Array(DecisionOptionSchema, { minItems: 1 }),
  deadline: Type.Optional(IsoDateTime),
  auto_action: Type.Optional(AutoActionSchema),
});
/** A structured request from an agent to its owner. */
export type DecisionRequest = Static<typeof DecisionRequestSchema>;

/** `status_alert` payload (contract §2.4). `detailFormat` keeps the contract's camelCase spelling. */
export const StatusAlertSchema = Type.Object({
  title: NonEmpty,
  severity: Type.Union([Type.Literal('info'), Type.Literal('warning'), Type.Literal('error'), Type.Literal('critical')]),
  message: Type.Optional(Type.String()),
  detail: Type.Optional(Type.String()),
  detailFormat: Type.Optional(Type.Union([Type.Literal('markdown'), Type.Literal('json'), Type.Literal('text')])),
  category: Type.Optional(Type.Union([Type.Literal('performance'), Type.Literal('security'), Type.Literal('error'), Type.Literal('info')])),
});
/** An alert from an agent (severity info/warning/error/critical). */
export type StatusAlert = Static<typeof StatusAlertSchema>;

/** `action_confirmation` payload (contract §2.4). */
export const ActionConfirmationSchema = Type.Object({
  action: NonEmpty,
  status: Type.Union([Type.Literal('success'), Type.Literal('failure'), Type.Literal('pending')]),
  detail: Type.Optional(Type.String()),
});
/** The outcome of an action the agent took. */
export type ActionConfirmation = Static<typeof ActionConfirmationSchema>;

/** `artifact` payload (contract §2.4): `type` is the artifact's kind (e.g. `code`, `report`), `format` e.g. `markdown`. */
export const ArtifactSchema = Type.Object({
  type: NonEmpty,
  title: NonEmpty,
  content: Type.String(),
  format: Type.Optional(Type.String()),
});
/** A produced artifact (document, code, report, …). */
export type Artifact = Static<typeof ArtifactSchema>;

/** `heartbeat` payload (contract §2.4 "heartbeat status"): the agent's status and current task. */
export const HeartbeatSchema = Type.Object({
  agent_status: NonEmpty,
  current_task: Type.Optional(Type.Union([Type.String(), Type.Null()])),
});
/** Periodic liveness/status report of an agent. */
export type Heartbeat = Static<typeof HeartbeatSchema>;

/** `text` payload (SDK addition so that plain messages share the envelope). */
export const TextContentSchema = Type.Object({ text: Type.String() });
/** A plain text message. */
export type TextContent = Static<typeof TextContentSchema>;

/** Schema of each content type's payload. */
export const CONTENT_SCHEMAS = {
  decision_request: DecisionRequestSchema,
  status_alert: StatusAlertSchema,
  action_confirmation: ActionConfirmationSchema,
  artifact: ArtifactSchema,
  heartbeat: HeartbeatSchema,
  text: TextContentSchema,
} as const satisfies Record<string, TSchema>;

/** A content type name. */
export type ContentType = keyof typeof CONTENT_SCHEMAS;

/** Payload type of each content type. */
export type ContentPayloads = { [K in ContentType]: Static<(typeof CONTENT_SCHEMAS)[K]> };

/** A decoded plaintext: `{type, payload}`, discriminated by `type`. */
export type Content = { [K in ContentType]: { type: K; payload: ContentPayloads[K] } }[ContentType];

/** The content types, in a stable order. */
export const CONTENT_TYPES = Object.keys(CONTENT_SCHEMAS) as ContentType[];

/** One validation problem: a JSON pointer into the envelope (e.g. `/payload/options/0/label`) and a message. */
export interface ContentIssue {
  path: string;
  message: string;
}

/**
 * A plaintext that is not a valid structured content envelope. `issues` lists every problem
 * found; `contentType` is the envelope's `type` when it could be read.
 */
export class ContentValidationError extends Error {
  override readonly name = 'ContentValidationError';
  constructor(
    readonly issues: ContentIssue[],
    readonly contentType?: string,
  ) {
    super(
      `invalid ${contentType ? `"${contentType}" ` : ''}content: ` +
        issues
          .slice(0, 5)
          .map((i) => `${i.path || '/'}: ${i.message}`)
          .join('; ') +
        (issues.length > 5 ? `; and ${issues.length - 5} more` : ''),
    );
  }
}

function isContentType(t: unknown): t is ContentType {
  return typeof t === 'string' && Object.prototype.hasOwnProperty.call(CONTENT_SCHEMAS, t);
}

/** Whether an ISO 8601 string (already matching the pattern) names a real instant (no 2026-02-30, no 25:00). */
function isRealDateTime(v: string): boolean {
  if (Number.isNaN(Date.parse(v))) return false;
  const [y, mo, d] = v.slice(0, 10).split('-').map(Number) as [number, number, number];
  const day = new Date(Date.UTC(y, mo - 1, d));
  return day.getUTCFullYear() === y && day.getUTCMonth() === mo - 1 && day.getUTCDate() === d;
}

/** Rules a JSON schema cannot say (see the file comment). */
function semanticIssues(type: ContentType, payload: unknown): ContentIssue[] {
  const issues: ContentIssue[] = [];
  const checkDate = (path: string, v: unknown) => {
    if (typeof v === 'string' && !isRealDateTime(v)) issues.push({ path, message: 'not a valid date-time' });
  };
  if (type === 'decision_request') {
    const p = payload as DecisionRequest;
    const seen = new Set<string>();
    p.options.forEach((o, i) => {
      if (seen.has(o.option_id)) issues.push({ path: `/payload/options/${i}/option_id`, message: `duplicate option_id "${o.option_id}"` });
      seen.add(o.option_id);
    });
    if (p.options.filter((o) => o.is_default === true).length > 1) issues.push({ path: '/payload/options', message: 'at most one option may be the default' });
    checkDate('/payload/deadline', p.deadline);
    if (p.auto_action) {
      if (p.deadline === undefined) issues.push({ path: '/payload/auto_action', message: 'auto_action needs a deadline' });
      if (p.auto_action.option_id !== undefined && !seen.has(p.auto_action.option_id)) {
        issues.push({ path: '/payload/auto_action/option_id', message: `"${p.auto_action.option_id}" is not one of the options` });
      }
    }
  }
  return issues;
}

/**
 * Validate a `{type, payload}` value.
 * @returns the value typed as {@link Content}.
 * @throws ContentValidationError listing every problem.
 */
export function validateContent(value: unknown): Content {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ContentValidationError([{ path: '', message: 'content must be an object {type, payload}' }]);
  }
  const { type, payload } = value as { type?: unknown; payload?: unknown };
  if (!isContentType(type)) {
    const message =
      type === undefined ? 'missing "type"' : `unknown content type ${JSON.stringify(type)}; expected one of ${CONTENT_TYPES.join(', ')}`;
    throw new ContentValidationError([{ path: '/type', message }], typeof type === 'string' ? type : undefined);
  }
  const schema: TSchema = CONTENT_SCHEMAS[type];
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) {
    throw new ContentValidationError([{ path: '/payload', message: 'payload must be an object' }], type);
  }
  const issues: ContentIssue[] = [...Value.Errors(schema, payload)].map((e) => ({ path: `/payload${e.path}`, message: e.message }));
  if (issues.length === 0) issues.push(...semanticIssues(type, payload));
  if (issues.length > 0) throw new ContentValidationError(issues, type);
  return value as Content;
}

/**
 * Encode structured content as the plaintext to encrypt: UTF-8 JSON `{type, payload}`.
 * Validates first (contract §2.4).
 * @throws ContentValidationError when the payload does not match the type's schema.
 */
export function encodeContent<T extends ContentType>(type: T, payload: ContentPayloads[T]): Uint8Array {
  validateContent({ type, payload });
  return new TextEncoder().encode(JSON.stringify({ type, payload }));
}

/**
 * Decode and validate a decrypted plaintext (bytes, or an already decoded string).
 * @throws ContentValidationError when the bytes are not UTF-8, not JSON, or not a valid envelope.
 */
export function decodeContent(plaintext: Uint8Array | string): Content {
  let text: string;
  if (typeof plaintext === 'string') text = plaintext;
  else {
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(plaintext);
    } catch {
      throw new ContentValidationError([{ path: '', message: 'plaintext is not valid UTF-8' }]);
    }
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new ContentValidationError([{ path: '', message: `plaintext is not JSON (${(err as Error).message})` }]);
  }
  return validateContent(value);
}

/** Type guard: whether `value` is a valid {@link Content} (never throws). */
export function isContent(value: unknown): value is Content {
  try {
    validateContent(value);
    return true;
  } catch {
    return false;
  }
}

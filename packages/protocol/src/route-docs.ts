/**
 * The OpenAPI description of a route row: the row's own `description` (what the operation does,
 * narrower rules on who may call it, the errors only this route answers and why), followed by the
 * parts every row with the same authentication shares, composed here so no row repeats them: who
 * may call it (from `auth`) and the errors of authentication, validation, body size and the global
 * rate limit (from `auth`, the row's inputs and the server's request pipeline: rate limit, then
 * credential, then tenant, then validation). Markdown, as OpenAPI 3.1 descriptions are CommonMark
 * (https://spec.openapis.org/oas/v3.1.0#rich-text-formatting).
 */
import type { AuthMode, RouteContract } from './contract.js';

/** Who may call a route of each auth mode (docs/architecture.md "Authentication"). */
export const AUTH_CALLERS: Readonly<Record<AuthMode, string>> = {
  none: 'anyone, without an owner JWT, device JWT or API key (a secret the route itself checks, if any, is described above).',
  public:
    'anyone; a credential is optional. An owner JWT, device JWT or API key that is sent is verified (an invalid one is refused) and may widen the answer or raise the rate limit.',
  owner: 'an owner of the tenant: owner JWT in `Authorization: Bearer`, with `X-Tenant-Id` choosing the tenant when the user belongs to several.',
  'owner-any': 'any signed-in owner: owner JWT in `Authorization: Bearer`; no tenant membership is needed.',
  device: 'an ACTIVE device: its device JWT in `Authorization: Bearer`.',
  'owner-or-device': 'an owner of the tenant (owner JWT) or an ACTIVE device of it (device JWT), in `Authorization: Bearer`.',
  'owner-or-apikey': 'an owner of the tenant (owner JWT in `Authorization: Bearer`) or a third-party agent with its API key (`X-API-Key`, optionally `X-Workspace-Id`).',
  'device-or-apikey': 'an agent acting as itself: its device JWT (`Authorization: Bearer`) or its API key (`X-API-Key`, optionally `X-Workspace-Id`).',
  any: 'an owner (owner JWT), a device (device JWT) or an API-key agent (`X-API-Key`) of the tenant.',
};

const acceptsApiKey = (auth: AuthMode) => auth === 'owner-or-apikey' || auth === 'device-or-apikey' || auth === 'any' || auth === 'public';
const acceptsOwner = (auth: AuthMode) => auth === 'owner' || auth === 'owner-or-device' || auth === 'owner-or-apikey' || auth === 'any' || auth === 'public';
const acceptsDevice = (auth: AuthMode) => auth !== 'none' && auth !== 'owner' && auth !== 'owner-any' && auth !== 'owner-or-apikey';

/** The request parts a row validates, in words (`the path parameters, query and body`). */
function inputsOf(row: RouteContract): string | undefined {
  const parts = [row.params && 'path parameters', row.query && 'query', row.headers && 'headers', (row.body || row.contentTypes) && 'body'].filter(
    (p): p is string => typeof p === 'string',
  );
  if (parts.length === 0) return undefined;
  return parts.length === 1 ? parts[0] : `${parts.slice(0, -1).join(', ')} or ${parts[parts.length - 1]}`;
}

/** Why a credential is refused with 403 under `auth` (undefined when it is not). */
function forbiddenReasons(auth: AuthMode): string | undefined {
  if (auth === 'none') return undefined;
  const reasons: string[] = [];
  if (auth !== 'public') reasons.push('the credential is of a kind this route does not take (the detail names the one it needs)');
  if (acceptsDevice(auth) || acceptsApiKey(auth)) reasons.push('the device behind the credential is revoked or not ACTIVE');
  if (acceptsOwner(auth)) reasons.push(auth === 'public' ? 'the owner is not a member of the tenant named by `X-Tenant-Id`' : 'the owner belongs to no tenant or not to the one named by `X-Tenant-Id`');
  if (acceptsApiKey(auth)) reasons.push("the API key's device is not a member of the workspace named by `X-Workspace-Id`");
  return `${auth === 'public' ? 'a credential was sent and ' : ''}${reasons.join('; or ')}.`;
}

/**
 * The error statuses every row with this auth and these inputs answers, with why, keyed by status:
 * 400 (the row's inputs fail their schema, or `X-Workspace-Id` is no UUID), 401 and 403
 * (authentication), 413 (a body above the server's body limit) and 429 (the global per-credential,
 * per-IP-without-one request budget; `Retry-After` in seconds).
 */
export function commonErrors(row: RouteContract): Readonly<Record<number, string>> {
  const out: Record<number, string> = {};
  const inputs = inputsOf(row);
  const workspace = acceptsApiKey(row.auth) ? 'an API-key caller sent an `X-Workspace-Id` that is not a UUID' : undefined;
  const bad = [inputs && `the ${inputs} do not match the schema (the detail names the field)`, workspace].filter(Boolean);
  if (bad.length > 0) out[400] = `${bad.join('; or ')}.`;
  if (row.auth === 'public') out[401] = 'a credential was sent and is malformed, expired or unknown (send none to call anonymously).';
  else if (row.auth !== 'none') out[401] = 'no credential, or one that is malformed, expired or unknown.';
  const forbidden = forbiddenReasons(row.auth);
  if (forbidden) out[403] = forbidden;
  if (row.body || row.contentTypes) out[413] = 'the body is larger than the server accepts.';
  out[429] = 'the caller sent more requests this minute than its budget (counted per credential, or per IP without one); `Retry-After` gives the seconds to wait.';
  return out;
}

/** Every error status a row answers: its own `errors` and those of {@link commonErrors}, ascending. */
export function documentedErrors(row: RouteContract): number[] {
  return [...new Set([...row.errors, ...Object.keys(commonErrors(row)).map(Number)])].sort((a, b) => a - b);
}

/**
 * The OpenAPI `description` of a row: its own description, `**Who may call:**` from its auth
 * mode, then `**Common errors**`, one line per status of {@link commonErrors}. Route-specific
 * reasons stay in the row's description, which names every other status of its `errors`.
 */
export function operationDescription(row: RouteContract): string {
  const common = Object.entries(commonErrors(row)).map(([status, why]) => `- **${status}**: ${why}`);
  return [row.description.trim(), `**Who may call:** ${AUTH_CALLERS[row.auth]}`, `**Common errors** (every error answers \`{detail}\`):\n${common.join('\n')}`].join('\n\n');
}

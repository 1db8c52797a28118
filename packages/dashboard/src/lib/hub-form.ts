/**
 * The hub-identity forms of the Marketplace screen (docs/decisions.md "Hub-address registry",
 * "Hub capabilities, profiles, search and certification"): registering a hub identity for one of
 * the tenant's agents (`POST /hub/register`), its capability records
 * (`POST /hub/{hub_address}/capabilities`) and profile edits (`PATCH /hub/{hub_address}/profile`).
 * The owner key of a registration is the agent's own Ed25519 identity key, read from its device
 * record (`GET /devices`, lowercase hex) and sent as padded base64 (RFC 4648 §4); it is never typed.
 */
import { HUB_ADDRESS_PATTERN, HubCapabilityInput, type Device, type HubIdentity, type HubProfile, type RegisterHubRequest, type UpdateHubProfileRequest } from '@parley/sdk';
import type { FormResult } from './format';

/** One capability as typed: numbers and the JSON Schema as text. */
export interface CapabilityFormValues {
  name: string;
  version: string;
  description: string;
  /** The input JSON Schema (an object), as JSON text. */
  inputSchema: string;
  /** Promised 95th-percentile latency in milliseconds; empty with `uptime` empty: no SLA. */
  latencyMs: string;
  /** Promised uptime as a fraction 0..1 (e.g. `0.99`). */
  uptime: string;
}

/** The registration form's values. */
export interface HubFormValues {
  /** The agent device to bind (an ACTIVE agent device of the tenant with no identity yet). */
  deviceId: string;
  hubAddress: string;
  displayName: string;
  description: string;
  capabilities: CapabilityFormValues[];
}

/** A new capability: version 1.0.0, any JSON object as input. */
export const EMPTY_CAPABILITY_FORM: CapabilityFormValues = Object.freeze({ name: '', version: '1.0.0', description: '', inputSchema: '{\n  "type": "object"\n}', latencyMs: '', uptime: '' }) as CapabilityFormValues;

/** A new registration with one capability to fill in. */
export const EMPTY_HUB_FORM: HubFormValues = Object.freeze({ deviceId: '', hubAddress: '', displayName: '', description: '', capabilities: [EMPTY_CAPABILITY_FORM] }) as HubFormValues;

const ADDRESS = new RegExp(HUB_ADDRESS_PATTERN);
const VERSION = new RegExp(HubCapabilityInput.properties.version.pattern!);
const HEX_KEY = /^[0-9a-fA-F]{64}$/;
/** Upper bound of `latency_p95_ms` the service accepts. */
const MAX_LATENCY_MS = 1e9;

/**
 * The agent's Ed25519 identity key (the device record's 64 hex digits) as the padded base64 of
 * its 32 bytes, the form a registration `public_key` takes; undefined when it is not 32 bytes of hex.
 */
export function ownerKeyFromDevice(identityPublicKeyHex: string): string | undefined {
  if (!HEX_KEY.test(identityPublicKeyHex)) return undefined;
  let bin = '';
  for (let i = 0; i < 64; i += 2) bin += String.fromCharCode(parseInt(identityPublicKeyHex.slice(i, i + 2), 16));
  return btoa(bin);
}

/** Agents a new identity can be bound to: ACTIVE agent devices not bound to any identity yet, by name. */
export function bindableAgents(devices: readonly Device[], identities: readonly Pick<HubIdentity, 'device_id'>[]): Device[] {
  const bound = new Set(identities.map((i) => i.device_id).filter((id): id is string => id !== null));
  return devices.filter((d) => d.kind === 'agent' && d.status === 'ACTIVE' && !bound.has(d.device_id)).sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * A hub address suggested by an agent's name: lowercase without accents, runs of other
 * characters as one `-`, no hyphen at either end, at most 32 characters; empty when that is no
 * valid address (fewer than 3 characters).
 */
export function suggestHubAddress(name: string): string {
  const slug = name
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^a-z0-9]+/g, '-')
    .slice(0, 32)
    .replace(/^-+|-+$/g, '');
  return ADDRESS.test(slug) ? slug : '';
}

/** Whether a capability entry was left untouched: no name, description or SLA typed (its version and schema keep their defaults). */
function isBlank(c: CapabilityFormValues): boolean {
  return c.name.trim() === '' && c.description.trim() === '' && c.latencyMs.trim() === '' && c.uptime.trim() === '';
}

/** A number typed into a field, or undefined when it is not a finite number. */
function num(text: string): number | undefined {
  if (text.trim() === '') return undefined;
  const n = Number(text);
  return Number.isFinite(n) ? n : undefined;
}

/**
 * The `POST /hub/{hub_address}/capabilities` body of a capability entry: name 1-100 characters,
 * semver-like version, the JSON Schema an object (the service checks it against its
 * meta-schema), the SLA both numbers or neither (latency 0-1e9 ms, uptime 0-1).
 */
export function capabilityBody(v: CapabilityFormValues): FormResult<HubCapabilityInput> {
  const name = v.name.trim();
  if (name === '' || name.length > 100) return { ok: false, error: 'A capability needs a name of 1-100 characters.' };
  const version = v.version.trim();
  if (!VERSION.test(version)) return { ok: false, error: `The version of ${name} must look like 1, 1.2 or 1.2.3.` };
  let schema: unknown;
  try {
    schema = JSON.parse(v.inputSchema);
  } catch {
    return { ok: false, error: `The input schema of ${name} is not valid JSON.` };
  }
  if (!schema || typeof schema !== 'object' || Array.isArray(schema)) return { ok: false, error: `The input schema of ${name} must be a JSON object, e.g. {"type": "object"}.` };
  const body: HubCapabilityInput = { name, version, input_schema: schema as Record<string, unknown> };
  if (v.description.trim()) body.description = v.description.trim();
  const latency = num(v.latencyMs);
  const uptime = num(v.uptime);
  if (v.latencyMs.trim() !== '' || v.uptime.trim() !== '') {
    if (latency === undefined || latency < 0 || latency > MAX_LATENCY_MS) return { ok: false, error: `The p95 latency of ${name} is a number of milliseconds (0 or more).` };
    if (uptime === undefined || uptime < 0 || uptime > 1) return { ok: false, error: `The uptime of ${name} is a fraction between 0 and 1, e.g. 0.99.` };
    body.sla = { latency_p95_ms: latency, uptime_sla: uptime };
  }
  return { ok: true, body };
}

/** A registration: the identity's body and the capability records to add after it. */
export interface Registration {
  body: RegisterHubRequest;
  capabilities: HubCapabilityInput[];
}

/**
 * The registration of the form for the chosen agent `device`: its identity key as owner key,
 * bound to it (`device_id`); capability names in the body, their records to register next.
 * Blank capability entries are skipped; capability names must be unique.
 */
export function registrationBody(v: HubFormValues, device: Pick<Device, 'device_id' | 'identity_public_key'> | undefined): FormResult<Registration> {
  if (!device) return { ok: false, error: 'Choose the agent this identity is for.' };
  const publicKey = ownerKeyFromDevice(device.identity_public_key);
  if (!publicKey) return { ok: false, error: 'This agent has no Ed25519 identity key on record; it cannot hold a hub identity.' };
  const hubAddress = v.hubAddress.trim().toLowerCase();
  if (!ADDRESS.test(hubAddress)) return { ok: false, error: 'The hub address is 3-32 characters of a-z, 0-9 and "-", not starting or ending with "-".' };
  const displayName = v.displayName.trim();
  if (displayName === '' || displayName.length > 100) return { ok: false, error: 'Give a display name of 1-100 characters.' };
  const capabilities: HubCapabilityInput[] = [];
  for (const c of v.capabilities.filter((x) => !isBlank(x))) {
    const r = capabilityBody(c);
    if (!r.ok) return r;
    if (capabilities.some((x) => x.name === r.body.name)) return { ok: false, error: `The capability ${r.body.name} is listed twice.` };
    capabilities.push(r.body);
  }
  const body: RegisterHubRequest = { hub_address: hubAddress, display_name: displayName, public_key: publicKey, device_id: device.device_id };
  if (v.description.trim()) body.description = v.description.trim();
  if (capabilities.length > 0) body.capabilities = capabilities.map((c) => c.name);
  return { ok: true, body: { body, capabilities } };
}

/** The profile form's values. */
export interface ProfileFormValues {
  displayName: string;
  description: string;
}

/** The `PATCH /hub/{hub_address}/profile` body: only what changed (an emptied description clears it). */
export function profilePatch(current: Pick<HubProfile, 'display_name' | 'description'>, v: ProfileFormValues): FormResult<UpdateHubProfileRequest> {
  const displayName = v.displayName.trim();
  if (displayName === '' || displayName.length > 100) return { ok: false, error: 'Give a display name of 1-100 characters.' };
  const body: UpdateHubProfileRequest = {};
  if (displayName !== current.display_name) body.display_name = displayName;
  const description = v.description.trim();
  if (description !== (current.description ?? '')) body.description = description === '' ? null : description;
  if (Object.keys(body).length === 0) return { ok: false, error: 'Nothing changed.' };
  return { ok: true, body };
}

/** An identity's tier in words, naming an operator's grant: `certified (granted by a platform operator)`. */
export function tierText(p: Pick<HubProfile, 'trust_tier' | 'tier_source'>): string {
  return p.tier_source === 'operator' ? `${p.trust_tier} (granted by a platform operator)` : p.trust_tier;
}

/** Whether a listing of this identity can be published: certified or enterprise. */
export function canList(p: Pick<HubProfile, 'trust_tier'>): boolean {
  return p.trust_tier !== 'unverified';
}

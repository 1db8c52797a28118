/**
 * Building the A2A 1.0 Agent Card of a hub identity: name and description from the identity,
 * one skill per capability (its description; its input JSON Schema in the card's
 * {@link SKILL_INPUT_SCHEMAS_EXTENSION} extension, since A2A skills have no schema field),
 * streaming, and one interface: the caller-local plugin endpoint
 * `http://127.0.0.1:<plugin port>/a2a/<hub_address>` with the JSON-RPC binding, authenticated by
 * the plugin token (HTTP bearer).
 *
 * The card is normalized the way the official `@a2a-js/sdk` canonicalizes cards for signing
 * (fields outside the A2A 1.0 schema and empty values dropped), so plain RFC 8785 JCS of the card
 * and the official canonicalization agree and either verifier accepts its signature.
 */
import { canonicalizeAgentCard, type AgentCard } from '@a2a-js/sdk';
import { A2A_PROTOCOL_VERSION } from '@parley/protocol';

/** Default port of the local plugin (`parley-agent plugin`). */
export const DEFAULT_PLUGIN_PORT = 18790;
/** URI of the card extension that carries each skill's input JSON Schema (`params.skills[<skill id>]`). */
export const SKILL_INPUT_SCHEMAS_EXTENSION = 'urn:parley:a2a:skill-input-schemas:v1';
/** Name of the card's security scheme: the plugin token as an HTTP bearer token. */
export const PLUGIN_SECURITY_SCHEME = 'parley_plugin';
/** A2A protocol binding of the plugin endpoint. */
export const A2A_JSONRPC_BINDING = 'JSONRPC';

/** A capability of the identity, as registered (`GET /hub/{address}/capabilities`) or named only. */
export interface AgentCardCapability {
  name: string;
  description?: string | null;
  /** A JSON Schema object. */
  input_schema?: Record<string, unknown> | null;
}

/** Input of {@link buildAgentCard}. */
export interface AgentCardInput {
  /** Lower-case hub address. */
  hubAddress: string;
  /** The identity's display name (the card's `name`). */
  displayName: string;
  /** The identity's description; the card says `Parley agent did:hub:<address>` when empty. */
  description?: string | null;
  /** Capability names or registered capabilities; a name repeated keeps its first entry. */
  capabilities: readonly (string | AgentCardCapability)[];
  /** Port of the caller-local plugin (default {@link DEFAULT_PLUGIN_PORT}). */
  pluginPort?: number;
  /** The card's `version` (default `1.0.0`). */
  version?: string;
}

/**
 * An A2A 1.0 Agent Card in its JSON wire form (ProtoJSON of `AgentCard`), with `signatures` once
 * signed. Fields are those of the A2A 1.0 schema; see `@a2a-js/sdk`'s `AgentCard` for each.
 */
export type AgentCardJson = Record<string, unknown> & {
  name: string;
  description: string;
  version: string;
  supportedInterfaces: { url: string; protocolBinding: string; protocolVersion?: string }[];
  skills?: { id: string; name: string; description: string; tags?: string[] }[];
  signatures?: { protected: string; signature: string; header?: Record<string, unknown> }[];
};

/** `http://127.0.0.1:<port>/a2a/<hub_address>`: where a caller's own plugin serves this agent. */
export const pluginA2aUrl = (hubAddress: string, port = DEFAULT_PLUGIN_PORT): string => `http://127.0.0.1:${port}/a2a/${hubAddress}`;

/** The unsigned Agent Card of a hub identity (see the file comment). */
export function buildAgentCard(input: AgentCardInput): AgentCardJson {
  const seen = new Map<string, AgentCardCapability>();
  for (const c of input.capabilities) {
    const cap = typeof c === 'string' ? { name: c } : c;
    if (!seen.has(cap.name)) seen.set(cap.name, cap);
  }
  const caps = [...seen.values()];
  const schemas = Object.fromEntries(caps.filter((c) => c.input_schema).map((c) => [c.name, c.input_schema]));
  const raw = {
    name: input.displayName,
    description: input.description || `Parley agent did:hub:${input.hubAddress}`,
    supportedInterfaces: [{ url: pluginA2aUrl(input.hubAddress, input.pluginPort), protocolBinding: A2A_JSONRPC_BINDING, protocolVersion: A2A_PROTOCOL_VERSION }],
    version: input.version ?? '1.0.0',
    capabilities: {
      streaming: true,
      ...(Object.keys(schemas).length
        ? { extensions: [{ uri: SKILL_INPUT_SCHEMAS_EXTENSION, description: 'JSON Schema of each skill input, by skill id', required: false, params: { skills: schemas } }] }
        : {}),
    },
    securitySchemes: { [PLUGIN_SECURITY_SCHEME]: { httpAuthSecurityScheme: { scheme: 'bearer', description: 'the plugin token of the caller-local Parley plugin' } } },
    defaultInputModes: ['text/plain', 'application/json'],
    defaultOutputModes: ['text/plain', 'application/json'],
    skills: caps.map((c) => ({ id: c.name, name: c.name, description: c.description || c.name, tags: [c.name] })),
  };
  // The official canonicalization takes the JSON form; its TypeScript type is the in-memory one.
  return JSON.parse(canonicalizeAgentCard(raw as unknown as AgentCard)) as AgentCardJson;
}

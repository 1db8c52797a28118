/**
 * The bridge (contract §4.19 "A bridge CLI takes a hub name and options `--token <spt>`,
 * `--api-key <key>` (auto-subscribes), `--endpoint <url>`, `--config`"; design §8.29): an MCP
 * server over stdio whose tools are the skills a rented agent's Skill Permission Token grants.
 * A tool call travels end to end encrypted as a skill invocation (`invocation.ts`) over the A2A
 * channel with the rented agent, through the local plugin (which alone holds the keys), and the
 * rented agent's `skill_result` is the tool's answer. The SPT is checked with the service
 * (`POST /grants/validate`) at start; with `--api-key` and no token the bridge rents the agent's
 * published listing first (the tenant's default payment method pays).
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { ParleyClient } from '@parley/sdk';
import { describeToolFailure, ToolError } from './errors.js';
import { encodeInvocation, parseResult } from './invocation.js';
import { PluginClient, type PluginSettings } from './plugin-client.js';
import { SERVER_INFO } from './server.js';
import { rentListing } from './tools/market.js';

/** Settings of a bridge. */
export interface BridgeOptions extends PluginSettings {
  /** The rented agent's hub address. */
  hub: string;
  /** The renter's SPT (from svc_subscribe). */
  token?: string;
  /** The renter agent's API key (to subscribe when no token is given, and for its plugin hint). */
  apiKey?: string;
  /** How long a tool call waits for the skill_result (ms, default 120 000). */
  resultTimeoutMs?: number;
}

/** The claims the bridge reads from an SPT (design §8.7). */
export interface SptClaims {
  sub: string;
  skill: string;
  aud: string;
  exp: number;
}

/** Read (not verify: the service does) the claims of a compact JWS. @throws ToolError when it is not one. */
export function sptClaims(token: string): SptClaims {
  const part = token.split('.')[1];
  try {
    const claims = JSON.parse(Buffer.from(part ?? '', 'base64url').toString('utf8')) as SptClaims;
    if (typeof claims.skill !== 'string' || typeof claims.aud !== 'string') throw new Error('claims');
    return claims;
  } catch {
    throw new ToolError('the token is not a Skill Permission Token (a compact JWS with skill and aud claims)');
  }
}

/** A tool name for a skill (MCP tool names: A-Z a-z 0-9 _ - .). */
export const toolNameOf = (skill: string) => skill.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 64);

/** A ready bridge: its SPT, granted skills and MCP server. */
export interface Bridge {
  token: string;
  skills: string[];
  server: Server;
}

/**
 * Prepare the bridge: obtain (or take) the SPT, validate it with the service, and build the MCP
 * server whose tools are the granted skills.
 * @throws ToolError (no published listing, invalid or expired token, …) or a ParleyApiError.
 */
export async function createBridge(options: BridgeOptions): Promise<Bridge> {
  const anonymous = new ParleyClient({ baseUrl: options.endpoint });
  let token = options.token;
  if (!token) {
    if (!options.apiKey) throw new ToolError('give --token <spt> (from svc_subscribe) or --api-key <key> to subscribe');
    const client = new ParleyClient({ baseUrl: options.endpoint, apiKey: options.apiKey });
    const listing = (await client.searchListings({ hub_address: options.hub, limit: 1 })).listings[0];
    if (!listing) throw new ToolError(`${options.hub} has no published marketplace listing to subscribe to`);
    token = (await rentListing(client, listing.listing_id)).grant.spt_token;
  }
  const claims = sptClaims(token);
  if (claims.sub !== `did:hub:${options.hub}`) throw new ToolError(`the token grants skills of ${claims.sub}, not of did:hub:${options.hub}`);
  const verdict = await anonymous.validateGrant({ token, audience: claims.aud });
  if (!verdict.valid) {
    const failed = verdict.checks.filter((c) => !c.passed).map((c) => c.check);
    throw new ToolError(`the token is not valid (${failed.join(', ')} failed); subscribe again (svc_subscribe) for a fresh one`);
  }
  const skills = claims.skill.split(/\s+/).filter(Boolean);
  const plugin = new PluginClient(options);
  const tools: Tool[] = skills.map((skill) => ({
    name: toolNameOf(skill),
    title: skill,
    description: `Skill "${skill}" of the rented agent did:hub:${options.hub}, invoked end to end encrypted through Parley. Pass the skill's arguments as the tool arguments; the answer is the agent's result.`,
    inputSchema: { type: 'object', additionalProperties: true },
  }));

  const call = async (name: string, args: Record<string, unknown>): Promise<CallToolResult> => {
    const skill = skills.find((s) => toolNameOf(s) === name);
    if (!skill) return { content: [{ type: 'text', text: `unknown tool "${name}"` }], isError: true };
    try {
      const channel = await plugin.openChannel({ peer: options.hub, protocol: 'mls', capability: skill, wait_ms: 30_000 });
      if (channel.status !== 'open') throw new ToolError(`the channel with ${options.hub} is ${channel.status}; retry once it is open`);
      const inv = encodeInvocation(skill, args, { spt: token });
      const sent = await plugin.send({ channel_id: channel.channel_id, text: inv.text });
      if (sent.outcome === 'blocked') throw new ToolError(`the invocation was blocked by policy`);
      const deadline = Date.now() + (options.resultTimeoutMs ?? 120_000);
      let since: string | undefined = sent.timestamp;
      for (let delay = 100; Date.now() < deadline; delay = Math.min(delay * 2, 1000)) {
        const page = await plugin.poll({ channel_id: channel.channel_id, ...(since ? { since } : {}), limit: 100 });
        for (const m of page.messages) {
          const result = parseResult(m.text, inv.id);
          if (result) {
            const text = result.ok ? (typeof result.result === 'string' ? result.result : JSON.stringify(result.result ?? null)) : (result.error ?? 'the skill failed');
            return { content: [{ type: 'text', text }], ...(result.ok ? {} : { isError: true }) };
          }
        }
        since = page.next_since ?? since;
        await new Promise((r) => setTimeout(r, delay));
      }
      throw new ToolError(`no result from ${options.hub} within ${Math.round((options.resultTimeoutMs ?? 120_000) / 1000)} s (invocation ${inv.id}${sent.outcome === 'held' ? ', held for owner approval' : ''})`);
    } catch (err) {
      return { content: [{ type: 'text', text: describeToolFailure(err, options.endpoint).message }], isError: true };
    }
  };

  const server = new Server({ ...SERVER_INFO, name: `parley-bridge:${options.hub}` }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools }));
  server.setRequestHandler(CallToolRequestSchema, (req) => call(req.params.name, req.params.arguments ?? {}));
  return { token, skills, server };
}

/**
 * Discovery tools (contract §4.19, §4.10, §4.11, §4.16; design §8.28): `svc_discover_skills` (the
 * marketplace's published listings, no authentication), `svc_discover_agents` (the hub search of
 * agent profiles with trust scores, anonymous limits) and `svc_get_agent_info` (one agent's
 * profile, verify-agent status and active grants, and the pricing of its published listing).
 */
import { Type } from '@sinclair/typebox';
import { ParleyApiError, type Listing } from '@parley/sdk';
import { ToolError } from '../errors.js';
import { defineTool } from '../tool.js';
import { didOf, HubName, hubAddressOf, OrNull } from './common.js';

const Tier = Type.Union([Type.Literal('unverified'), Type.Literal('certified'), Type.Literal('enterprise')]);
const Pricing = Type.Object({ model: Type.String(), price_cents: Type.Integer() });
const Limit = Type.Integer({ minimum: 1, maximum: 100, default: 20, description: '1-100, default 20 (anonymous searches answer at most 20 listings / 10 agents)' });

const SkillListing = Type.Object({
  listing_id: Type.String(),
  hub_name: Type.String(),
  title: Type.String(),
  description: Type.String(),
  category: Type.String(),
  skills: Type.Array(Type.String()),
  certification: Type.String(),
  trust_score: OrNull(Type.Number()),
  pricing: Pricing,
});

const money = (cents: number) => `$${(cents / 100).toFixed(2)}`;

/** A listing as `svc_discover_skills` answers it. */
function skillListing(l: Listing) {
  return {
    listing_id: l.listing_id,
    hub_name: l.hub_address,
    title: l.title,
    description: l.description,
    category: l.category,
    skills: l.capabilities,
    certification: l.trust_tier,
    trust_score: l.trust_score,
    pricing: { model: l.pricing.model, price_cents: l.pricing.price_cents },
  };
}

export const discoverSkills = defineTool({
  name: 'svc_discover_skills',
  title: 'Discover skills',
  description:
    'Search the Parley marketplace for published agent skills to rent (no authentication). `query` is free text over titles, descriptions, categories and skills; every tag must be a skill of the listing; `certification` is the minimum trust level (`verified` = any published listing, since only verified identities can publish).',
  input: Type.Object({
    query: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    tags: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 10 })),
    certification: Type.Optional(Type.Union([Type.Literal('verified'), Type.Literal('certified'), Type.Literal('enterprise')])),
    limit: Type.Optional(Limit),
  }),
  output: Type.Object({ listings: Type.Array(SkillListing), count: Type.Integer() }),
  annotations: { readOnlyHint: true, openWorldHint: true },
  async run(args, ctx) {
    const limit = args.limit ?? 20;
    const tags = args.tags ?? [];
    const page = await ctx.service.anonymous.searchListings({
      ...(args.query !== undefined ? { query: args.query } : {}),
      ...(tags[0] !== undefined ? { capability: tags[0] } : {}),
      ...(args.certification && args.certification !== 'verified' ? { tier: args.certification } : {}),
      limit: Math.min(limit, 20),
    });
    const listings = page.listings.filter((l) => tags.every((t) => l.capabilities.includes(t))).map(skillListing);
    return { listings, count: listings.length };
  },
  text: (r) =>
    r.count === 0
      ? 'No published listing matches.'
      : r.listings.map((l) => `${l.title} — ${l.hub_name} [${l.certification}${l.trust_score === null ? '' : `, trust ${l.trust_score.toFixed(2)}`}] ${money(l.pricing.price_cents)} ${l.pricing.model}; skills: ${l.skills.join(', ')}; listing ${l.listing_id}`).join('\n'),
});

const AgentProfile = Type.Object({
  hub_name: Type.String(),
  did: Type.String(),
  display_name: Type.String(),
  description: OrNull(Type.String()),
  trust_tier: Type.String(),
  trust_score: Type.Number(),
  capabilities: Type.Array(Type.String()),
  last_active: OrNull(Type.String()),
});

export const discoverAgents = defineTool({
  name: 'svc_discover_agents',
  title: 'Discover agents',
  description:
    'Search the Parley hub directory for agents (design §8.28): free text over names, descriptions and capabilities, a minimum trust tier and a capability; answers agent profiles with trust scores (no authentication; anonymous searches answer at most 10).',
  input: Type.Object({
    query: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
    tier: Type.Optional(Tier),
    capability: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    limit: Type.Optional(Limit),
  }),
  output: Type.Object({ agents: Type.Array(AgentProfile), count: Type.Integer() }),
  annotations: { readOnlyHint: true, openWorldHint: true },
  async run(args, ctx) {
    const { results } = await ctx.service.anonymous.searchHub({
      ...(args.query !== undefined ? { query: args.query } : {}),
      ...(args.tier !== undefined ? { tier: args.tier } : {}),
      ...(args.capability !== undefined ? { capability: args.capability } : {}),
      limit: args.limit ?? 20,
    });
    const agents = results.map((p) => ({
      hub_name: p.hub_address,
      did: didOf(p.hub_address),
      display_name: p.display_name,
      description: p.description,
      trust_tier: p.trust_tier,
      trust_score: p.trust_score,
      capabilities: p.capabilities,
      last_active: p.last_active,
    }));
    return { agents, count: agents.length };
  },
  text: (r) => (r.count === 0 ? 'No agent matches.' : r.agents.map((a) => `${a.did} "${a.display_name}" [${a.trust_tier}, trust ${a.trust_score.toFixed(2)}] capabilities: ${a.capabilities.join(', ') || '-'}`).join('\n')),
});

export const getAgentInfo = defineTool({
  name: 'svc_get_agent_info',
  title: 'Agent info',
  description:
    'Look up one agent by hub name or DID before delegating to it or messaging it: trust score and certification, verify-agent status (verified, unverified, suspended, not_found) and active grants, skills, and the pricing of its published marketplace listing (null when it has none).',
  input: Type.Object({ hubName: HubName }),
  output: Type.Object({
    hub_name: Type.String(),
    did: Type.String(),
    display_name: Type.String(),
    description: OrNull(Type.String()),
    trust_score: Type.Number(),
    certification: Type.String(),
    status: Type.String(),
    active_grants: Type.Integer(),
    skills: Type.Array(Type.String()),
    pricing: OrNull(Pricing),
    listing_id: OrNull(Type.String()),
    mcp_url: OrNull(Type.String()),
  }),
  annotations: { readOnlyHint: true, openWorldHint: true },
  async run(args, ctx) {
    const address = hubAddressOf(args.hubName);
    const client = await ctx.service.agent();
    const profile = await ctx.service.anonymous.getHubProfile(address).catch((err: unknown) => {
      if (err instanceof ParleyApiError && err.status === 404) throw new ToolError(`404 no agent named ${address} is registered on this hub`, 404);
      throw err;
    });
    const [verification, listings] = await Promise.all([client.verifyAgent(address), ctx.service.anonymous.searchListings({ hub_address: address, limit: 1 })]);
    const listing = listings.listings[0];
    return {
      hub_name: address,
      did: didOf(address),
      display_name: profile.display_name,
      description: profile.description,
      trust_score: verification.trust_scores?.composite ?? profile.trust_score,
      certification: verification.trust_tier ?? profile.trust_tier,
      status: verification.status,
      active_grants: verification.active_grants,
      skills: profile.capabilities,
      pricing: listing ? { model: listing.pricing.model, price_cents: listing.pricing.price_cents } : null,
      listing_id: listing?.listing_id ?? null,
      // Rented agents are reached through `parley-bridge` (svc_connect_agent), not an MCP URL of their own.
      mcp_url: null,
    };
  },
  text: (r) =>
    `${r.did} "${r.display_name}": verification ${r.status}, tier ${r.certification}, trust ${r.trust_score.toFixed(2)}, ${r.active_grants} active grant(s); skills: ${r.skills.join(', ') || '-'}; ${r.pricing ? `listing ${r.listing_id} at ${money(r.pricing.price_cents)} ${r.pricing.model}` : 'not listed on the marketplace'}`,
});

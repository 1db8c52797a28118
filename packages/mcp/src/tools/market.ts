/**
 * Marketplace tools (contract §4.19, §4.16; design §8.29): `svc_subscribe` rents a listing with the
 * tenant's default payment method and answers the renter's SPT and a host configuration that runs
 * the bridge; `svc_connect_agent` answers that configuration for an SPT already held.
 */
import { Type } from '@sinclair/typebox';
import { ParleyApiError, type ParleyClient, type Rental } from '@parley/sdk';
import { ToolError } from '../errors.js';
import { bridgeEntry, bridgeHostConfig, claudeCommand } from '../host-config.js';
import { defineTool } from '../tool.js';
import { HubName, hubAddressOf, OrNull } from './common.js';

const HostConfigSchema = Type.Object({ mcpServers: Type.Record(Type.String(), Type.Object({ command: Type.String(), args: Type.Array(Type.String()), env: Type.Optional(Type.Record(Type.String(), Type.String())) })) });

/** How long `svc_subscribe` waits for an asynchronous payment to confirm (ms). */
export const SUBSCRIBE_WAIT_MS = 20_000;

/** Poll a pending rental until the processor confirmed it (or it failed, or the wait ran out). */
async function settled(client: ParleyClient, rental: Rental, deadline: number): Promise<Rental> {
  let r = rental;
  for (let delay = 100; r.status === 'pending' && Date.now() < deadline; delay = Math.min(delay * 2, 1000)) {
    await new Promise((res) => setTimeout(res, delay));
    r = await client.getRental(r.rental_id);
  }
  return r;
}

/**
 * Rent `listingId` with the tenant's default payment method (design §8.29) and wait for the
 * processor's confirmation; answers the active rental with its grant (SPT).
 * @throws ToolError (no default payment method, still pending, declined) or ParleyApiError.
 */
export async function rentListing(client: ParleyClient, listingId: string): Promise<Rental & { grant: NonNullable<Rental['grant']> }> {
  let rental: Rental;
  try {
    rental = await client.createRental({ listing_id: listingId });
  } catch (err) {
    if (err instanceof ParleyApiError && /payment_method|payment method/.test(err.detail)) {
      throw new ToolError(`${err.status} ${err.detail}. Ask the owner to set a default payment method once: PUT /api/v1/marketplace/payment-method {"payment_method": "pm_…"}`, err.status);
    }
    throw err;
  }
  rental = await settled(client, rental, Date.now() + SUBSCRIBE_WAIT_MS);
  if (rental.status === 'pending') throw new ToolError(`rental ${rental.rental_id} is still waiting for the payment processor; check it later with GET /api/v1/marketplace/rentals/${rental.rental_id}`);
  if (rental.status !== 'active' || !rental.grant) throw new ToolError(`rental ${rental.rental_id} is ${rental.status}${rental.reason ? ` (${rental.reason})` : ''}: no token was issued`, 402);
  return rental as Rental & { grant: NonNullable<Rental['grant']> };
}

export const subscribe = defineTool({
  name: 'svc_subscribe',
  title: 'Rent an agent',
  description:
    'Rent a marketplace listing with the tenant’s default payment method (set once by the owner with PUT /api/v1/marketplace/payment-method). Answers the Skill Permission Token for the rented skills, its expiry, and an MCP host configuration that reaches the rented agent through parley-bridge.',
  input: Type.Object({ listingId: Type.String({ pattern: '^[0-9a-fA-F-]{36}$', description: 'listing_id from svc_discover_skills' }), hubName: Type.Optional(HubName) }),
  output: Type.Object({
    rental_id: Type.String(),
    status: Type.String(),
    hub_name: Type.String(),
    amount_cents: Type.Integer(),
    spt_token: Type.String(),
    expires_at: Type.String(),
    ends_at: OrNull(Type.String()),
    mcp_config: HostConfigSchema,
  }),
  // It spends money and is not idempotent: hosts should ask before running it.
  annotations: { destructiveHint: true, idempotentHint: false, openWorldHint: true },
  async run(args, ctx) {
    const client = await ctx.service.agent();
    const listing = await client.getListing(args.listingId);
    if (args.hubName !== undefined && hubAddressOf(args.hubName) !== listing.hub_address) {
      throw new ToolError(`listing ${args.listingId} rents ${listing.hub_address}, not ${hubAddressOf(args.hubName)}`, 409);
    }
    const rental = await rentListing(client, args.listingId);
    const grant = rental.grant;
    return {
      rental_id: rental.rental_id,
      status: rental.status,
      hub_name: listing.hub_address,
      amount_cents: rental.amount_cents,
      spt_token: grant.spt_token,
      expires_at: grant.expires_at,
      ends_at: rental.ends_at,
      mcp_config: bridgeHostConfig(listing.hub_address, ctx.config.endpoint, grant.spt_token),
    };
  },
  text: (r) => `Rented ${r.hub_name} (rental ${r.rental_id}, ${r.status}${r.ends_at ? ` until ${r.ends_at}` : ''}); token expires ${r.expires_at}. Add to your MCP host:\n${JSON.stringify(r.mcp_config, null, 2)}`,
});

export const connectAgent = defineTool({
  name: 'svc_connect_agent',
  title: 'Host configuration for an agent',
  description:
    'Answer a ready-to-paste MCP host configuration (the mcpServers JSON block and the one-line `claude mcp add` command) that connects this host to a rented agent through parley-bridge, with the SPT from svc_subscribe (without one, the bridge subscribes with PARLEY_API_KEY).',
  input: Type.Object({ hubName: HubName, sptToken: Type.Optional(Type.String({ minLength: 10, maxLength: 8192 })) }),
  output: Type.Object({ hub_name: Type.String(), mcp_config: HostConfigSchema, claude_command: Type.String() }),
  annotations: { readOnlyHint: true },
  async run(args, ctx) {
    const hub = hubAddressOf(args.hubName);
    return {
      hub_name: hub,
      mcp_config: bridgeHostConfig(hub, ctx.config.endpoint, args.sptToken),
      claude_command: claudeCommand(hub, bridgeEntry(hub, ctx.config.endpoint, args.sptToken)),
    };
  },
  text: (r) => `${JSON.stringify(r.mcp_config, null, 2)}\nClaude Code: ${r.claude_command}`,
});

/**
 * Marketplace (contract §2.13, §3.6–§3.8, §4.16; design §8.9, §8.23–§8.26, §8.29, §8.35): listings,
 * rentals, disputes, payouts, the processor's connect dashboard, the tenant's default payment
 * method, the ledger check and the processor webhooks. Money is integer US cents.
 *
 * "Workspace auth" (contract §4.16, design §8.23): an owner JWT of the tenant, or an API key of the
 * tenant with `X-Workspace-Id`. Listing writes are `owner-or-apikey` (the key must name its
 * workspace); rentals, disputes, payouts, connect and the payment-method read are `any`: an agent
 * acts there with its API key (with or without `X-Workspace-Id`) or with its own device JWT (the
 * MCP server's private-key configuration, design §8.27), and an owner device's JWT is refused (403).
 * Listing search and detail are `public`: an anonymous caller sees published listings only, in
 * the reduced view (no tenant, workspace, SLA or term; pricing as `model` and `price_cents` only),
 * at most 20 results per search in total.
 */
import { Type, type Static } from '@sinclair/typebox';
import { defineRoute } from '../contract.js';
import { HUB_ADDRESS_PATTERN, HubCapabilityList } from './hub.js';
import { lit, Nullable, Timestamp, Uuid } from '../common.js';
import { ActingDeviceHeader } from './conversations.js';
import { TRUST_TIERS } from './trust.js';
import { Page, PageCursor, PageLimit } from '../paging.js';
import { RentalMembers, RentalMessageInput, RentalSendResult, RentalMessageQuery, RentalMessagePage } from './rental-room.js';
import { FileDisputeRequest, DisputeNoteRequest, DISPUTE_OUTCOMES, ResolveDisputeRequest, Dispute, DisputeListQuery, DisputePage, PAYOUT_STATUSES, PayoutListQuery, PayoutPage, PayoutSummary, ConnectDashboard, PaymentMethodRequest, PaymentMethodInfo, PaymentProcessorInfo, LedgerVerification, WebhookAck } from './marketplace-money.js';

// ---------------------------------------------------------------- listings (contract §3.7, design §8.23)

/** Listing statuses (contract §2.13). */
export const LISTING_STATUSES = ['draft', 'published', 'paused', 'delisted'] as const;
export type ListingStatus = (typeof LISTING_STATUSES)[number];

/** Pricing models (design §8.23). */
export const PRICING_MODELS = ['per_task', 'per_hour', 'per_day', 'monthly'] as const;
export type PricingModel = (typeof PRICING_MODELS)[number];

/** The tiers a listing may require of its identity (design §8.23). */
export const LISTING_TIERS = ['certified', 'enterprise'] as const;

/** Pricing of a listing: integer cents (at least 50, at most 1,000,000.00 USD), USD only. */
export const ListingPricing = Type.Object({
  model: lit(PRICING_MODELS),
  price_cents: Type.Integer({ minimum: 50, maximum: 100_000_000, description: 'integer US cents' }),
  currency: Type.Optional(Type.Literal('usd', { default: 'usd' })),
});
export type ListingPricing = Static<typeof ListingPricing>;

/** SLA terms of a listing (design §8.23); the platform reviews disputes against them. */
export const ListingSla = Type.Object(
  {
    latency_p95_ms: Type.Optional(Type.Integer({ minimum: 1, maximum: 3_600_000 })),
    uptime_sla: Type.Optional(Type.Number({ minimum: 0, maximum: 1, description: 'fraction, e.g. 0.995' })),
  },
  { additionalProperties: false },
);
export type ListingSla = Static<typeof ListingSla>;

const Title = Type.String({ minLength: 1, maxLength: 200, pattern: '\\S' });
const Description = Type.String({ maxLength: 5000 });
const Category = Type.String({ minLength: 1, maxLength: 64, pattern: '^[a-z0-9][a-z0-9_-]*$', description: 'lowercase slug, e.g. research' });
const CapabilityNames = Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 50, description: 'capability names the rental grants (SPT skills)' });
const TermHours = Type.Integer({ minimum: 1, maximum: 8760, description: 'rental term in hours (per_hour/per_day/monthly: the period rented; per_task: how long the task may run)' });
const MinScore = Type.Number({ minimum: 0, maximum: 1, description: 'composite trust score the rented agent must keep' });

/** `POST /api/v1/marketplace/listings` body: a draft for one of the tenant's hub identities. */
export const CreateListingRequest = Type.Object({
  hub_address: Type.String({ minLength: 3, maxLength: 32 }),
  title: Title,
  description: Type.Optional(Description),
  category: Category,
  capabilities: Type.Optional(CapabilityNames),
  pricing: ListingPricing,
  sla: Type.Optional(ListingSla),
  term_hours: Type.Optional(TermHours),
  min_tier: Type.Optional(lit(LISTING_TIERS)),
  min_score: Type.Optional(MinScore),
});
export type CreateListingRequest = Static<typeof CreateListingRequest>;

/** `PATCH /api/v1/marketplace/listings/{id}` body: any field of a non-delisted listing; `null` clears the optional ones. */
export const UpdateListingRequest = Type.Object({
  title: Type.Optional(Title),
  description: Type.Optional(Description),
  category: Type.Optional(Category),
  capabilities: Type.Optional(CapabilityNames),
  pricing: Type.Optional(ListingPricing),
  sla: Type.Optional(ListingSla),
  term_hours: Type.Optional(Nullable(TermHours)),
  min_tier: Type.Optional(lit(LISTING_TIERS)),
  min_score: Type.Optional(Nullable(MinScore)),
});
export type UpdateListingRequest = Static<typeof UpdateListingRequest>;

/**
 * A listing. Owners of the listing and authenticated callers see every field; anonymous callers
 * the reduced view (the optional fields absent, `pricing` without `currency`). `trust_tier` and
 * `trust_score` are the identity's live values.
 */
export const Listing = Type.Object({
  listing_id: Uuid,
  hub_address: Type.String(),
  title: Type.String(),
  description: Type.String(),
  category: Type.String(),
  capabilities: Type.Array(Type.String()),
  pricing: Type.Object({ model: lit(PRICING_MODELS), price_cents: Type.Integer(), currency: Type.Optional(Type.Literal('usd')) }),
  status: lit(LISTING_STATUSES),
  trust_tier: lit(TRUST_TIERS),
  trust_score: Nullable(Type.Number()),
  published_at: Nullable(Timestamp),
  tenant_id: Type.Optional(Uuid),
  workspace_id: Type.Optional(Nullable(Uuid)),
  sla: Type.Optional(ListingSla),
  term_hours: Type.Optional(Nullable(Type.Integer())),
  min_tier: Type.Optional(lit(LISTING_TIERS)),
  min_score: Type.Optional(Nullable(Type.Number())),
  created_at: Type.Optional(Timestamp),
  updated_at: Type.Optional(Timestamp),
});
export type Listing = Static<typeof Listing>;

/** `GET /api/v1/marketplace/listings` query (design §8.35); `mine=true` lists the caller tenant's own listings in every status. */
export const ListingSearchQuery = Type.Object({
  query: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'free text (websearch syntax) over title, description, category and capabilities' })),
  capability: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  hub_address: Type.Optional(Type.String({ pattern: HUB_ADDRESS_PATTERN, description: 'the listings of one hub identity (any case)' })),
  category: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  tier: Type.Optional(lit(TRUST_TIERS, { description: 'minimum live trust tier of the identity' })),
  min_price_cents: Type.Optional(Type.Integer({ minimum: 0 })),
  max_price_cents: Type.Optional(Type.Integer({ minimum: 0 })),
  mine: Type.Optional(Type.Boolean({ description: "the caller tenant's own listings, every status (authenticated callers)" })),
  limit: PageLimit({ maximum: 100, description: 'default 20; anonymous callers at most 20' }),
  cursor: PageCursor({ description: 'the previous answer’s next_cursor' }),
});
export type ListingSearchQuery = Static<typeof ListingSearchQuery>;

/** A page of listings: by relevance with `query`, else newest published first. */
export const ListingPage = Page('listings', Listing);
export type ListingPage = Static<typeof ListingPage>;

// ---------------------------------------------------------------- rentals (contract §3.6, design §8.9, §8.35)

/** Rental statuses (contract §3.6 plus design §8.35's `suspended`). */
export const RENTAL_STATUSES = ['pending', 'active', 'suspended', 'completed', 'cancelled', 'disputed', 'resolved'] as const;
export type RentalStatus = (typeof RENTAL_STATUSES)[number];

/** `POST /api/v1/marketplace/rentals` body (contract §2.13); without `payment_method`, the tenant's default (design §8.29). */
export const CreateRentalRequest = Type.Object({
  listing_id: Uuid,
  payment_method: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'payment-processor payment method reference, e.g. pm_card_visa' })),
});
export type CreateRentalRequest = Static<typeof CreateRentalRequest>;

/** The renter's Skill Permission Token for the listed skills (while the rental is active). */
export const RentalGrant = Type.Object({ grant_id: Uuid, spt_token: Type.String(), expires_at: Timestamp });
export type RentalGrant = Static<typeof RentalGrant>;

/** A rental as either party sees it (design §8.35); `grant` only for the renter while active. */
export const Rental = Type.Object({
  rental_id: Uuid,
  listing_id: Uuid,
  hub_address: Type.String(),
  role: Type.Union([Type.Literal('renter'), Type.Literal('developer')], { description: "the caller's side" }),
  status: lit(RENTAL_STATUSES),
  room_id: Nullable(Uuid),
  renter_tenant_id: Uuid,
  developer_tenant_id: Uuid,
  pricing_model: lit(PRICING_MODELS),
  amount_cents: Type.Integer(),
  fee_cents: Type.Integer(),
  refunded_cents: Type.Integer(),
  currency: Type.Literal('usd'),
  term_hours: Nullable(Type.Integer()),
  starts_at: Nullable(Timestamp),
  ends_at: Nullable(Timestamp),
  reason: Nullable(Type.String({ description: 'why it is suspended or ended (payment_failed, trust_drop, term_ended, …)' })),
  created_at: Timestamp,
  grant: Type.Optional(RentalGrant),
});
export type Rental = Static<typeof Rental>;

/** `GET /api/v1/marketplace/rentals` query (design §8.35). */
export const RentalListQuery = Type.Object({
  status: Type.Optional(lit(RENTAL_STATUSES)),
  role: Type.Optional(Type.Union([Type.Literal('renter'), Type.Literal('developer')], { default: 'renter' })),
  limit: PageLimit(),
  cursor: PageCursor(),
});
export type RentalListQuery = Static<typeof RentalListQuery>;

/** A page of rentals, newest first. */
export const RentalPage = Page('rentals', Rental);
export type RentalPage = Static<typeof RentalPage>;

// ---------------------------------------------------------------- events to owners' sockets (and webhooks)

/** `rental_updated` event data, to the owners of both tenants of a rental on each status change; `role` is the receiving tenant's side. */
export const RentalUpdatedEvent = Type.Object({
  rental_id: Uuid,
  listing_id: Uuid,
  status: lit(RENTAL_STATUSES),
  previous_status: Nullable(lit(RENTAL_STATUSES)),
  reason: Nullable(Type.String()),
  role: Type.Union([Type.Literal('renter'), Type.Literal('developer')]),
});
export type RentalUpdatedEvent = Static<typeof RentalUpdatedEvent>;

/** `dispute_updated` event data, to the owners of both tenants when a dispute is filed or resolved. */
export const DisputeUpdatedEvent = Type.Object({
  dispute_id: Uuid,
  rental_id: Uuid,
  status: Type.Union([Type.Literal('open'), Type.Literal('resolved')]),
  outcome: Nullable(lit(DISPUTE_OUTCOMES)),
});
export type DisputeUpdatedEvent = Static<typeof DisputeUpdatedEvent>;

/** `payout_updated` event data, to the developer tenant's owners when a payout changes status. */
export const PayoutUpdatedEvent = Type.Object({ payout_id: Uuid, status: lit(PAYOUT_STATUSES), amount_cents: Type.Integer() });
export type PayoutUpdatedEvent = Static<typeof PayoutUpdatedEvent>;

// ---------------------------------------------------------------- route rows

const tags = ['marketplace'];
const IdParams = Type.Object({ id: Uuid });
const transitionErrors = [400, 401, 403, 404, 409];

export const marketplaceRoutes = {
  searchListings: defineRoute({
    method: 'GET',
    path: '/api/v1/marketplace/listings',
    auth: 'public',
    tags,
    summary: 'Search published listings (anonymous: reduced view, at most 20 results in total)',
    description:
      'Searches published listings: free text (relevance order, else newest first), capability, hub address, category, minimum live trust tier and price range; `mine=true` lists the caller tenant\'s own listings in every status. Anonymous callers get a reduced view and at most 20 results of a search in total (later pages count what came before; a made-up cursor gains nothing); callers with a credential the full view and pages of up to 100. 400 when `cursor` is not a `next_cursor` of the same query, `mine` comes without a credential, or the minimum price is above the maximum.',
    query: ListingSearchQuery,
    responses: { 200: ListingPage },
    errors: [400, 401, 429],
  }),
  getListing: defineRoute({
    method: 'GET',
    path: '/api/v1/marketplace/listings/{id}',
    auth: 'public',
    tags,
    summary: 'Listing detail with the live trust tier and score',
    description:
      'One listing with the listed identity\'s live trust tier and score: the tenant\'s own in any status, another tenant\'s when published; anonymous callers see published ones in the reduced view. 404 when the listing is neither published nor the caller\'s.',
    params: IdParams,
    responses: { 200: Listing },
    errors: [400, 401, 404, 429],
  }),
  listingCapabilities: defineRoute({
    method: 'GET',
    path: '/api/v1/marketplace/listings/{id}/capabilities',
    auth: 'any',
    tags,
    summary: 'The registered capabilities (versions, input schemas, SLA) the listing rents out',
    description:
      'The listed hub identity\'s registered capabilities whose names the listing names, oldest first: what a renter may call, with version, input schema, promised SLA (`latency_p95_ms`, `uptime_sla`) and certification tier. Any authenticated caller, for a published listing or one of its own tenant. 403 also for an owner device\'s JWT. 404 when the listing is neither published nor the caller\'s.',
    params: IdParams,
    responses: { 200: HubCapabilityList },
    errors: [400, 401, 403, 404],
  }),
  createListing: defineRoute({
    method: 'POST',
    path: '/api/v1/marketplace/listings',
    auth: 'owner-or-apikey',
    tags,
    summary: 'Create a draft listing for one of the tenant’s hub identities',
    description:
      'Creates a draft listing renting out one of the tenant\'s hub identities: title, description, category, capabilities, pricing (model and price in cents), SLA, term, minimum tier (default `certified`) and trust-score floor. An API key with `X-Workspace-Id` files it under that workspace. Audited; answers 201. 400 when `hub_address` is malformed or a pricing term is invalid. 403 when an API key names another workspace\'s listing (send its `X-Workspace-Id`), or an API key acts without `X-Workspace-Id`, or the caller uses an owner device\'s JWT. 404 when the tenant has no hub identity with that address.',
    body: CreateListingRequest,
    responses: { 201: Listing },
    errors: [400, 401, 403, 404],
  }),
  updateListing: defineRoute({
    method: 'PATCH',
    path: '/api/v1/marketplace/listings/{id}',
    auth: 'owner-or-apikey',
    tags,
    summary: 'Update a listing (not once delisted)',
    description:
      'Changes a listing\'s fields (any subset) in any status but delisted; the search document is refreshed. Audited; answers the listing. 403 when an API key names another workspace\'s listing (send its `X-Workspace-Id`), or an API key acts without `X-Workspace-Id`, or the caller uses an owner device\'s JWT. 404 when no listing of the tenant has this id. 409 when the listing is delisted.',
    params: IdParams,
    body: UpdateListingRequest,
    responses: { 200: Listing },
    errors: transitionErrors,
  }),
  publishListing: defineRoute({
    method: 'POST',
    path: '/api/v1/marketplace/listings/{id}/publish',
    auth: 'owner-or-apikey',
    tags,
    summary: 'draft -> published (the identity is certified or better, and meets min_tier)',
    description:
      'Publishes a draft: it appears in search and can be rented. The listed identity must be active, bound to an agent device, `certified` or better, and meet the listing\'s `min_tier`. Audited; answers the listing. 403 when an API key names another workspace\'s listing (send its `X-Workspace-Id`), or an API key acts without `X-Workspace-Id`, or the caller uses an owner device\'s JWT. 404 when no listing of the tenant has this id. 409 when the listing is not a draft or the identity does not qualify (the detail says why).',
    params: IdParams,
    responses: { 200: Listing },
    errors: transitionErrors,
  }),
  pauseListing: defineRoute({
    method: 'POST',
    path: '/api/v1/marketplace/listings/{id}/pause',
    auth: 'owner-or-apikey',
    tags,
    summary: 'published -> paused',
    description:
      'Pauses a published listing: it leaves search and takes no new rentals; running rentals continue. Audited; answers the listing. 403 when an API key names another workspace\'s listing (send its `X-Workspace-Id`), or an API key acts without `X-Workspace-Id`, or the caller uses an owner device\'s JWT. 404 when no listing of the tenant has this id. 409 when the listing is not published.',
    params: IdParams,
    responses: { 200: Listing },
    errors: transitionErrors,
  }),
  resumeListing: defineRoute({
    method: 'POST',
    path: '/api/v1/marketplace/listings/{id}/resume',
    auth: 'owner-or-apikey',
    tags,
    summary: 'paused -> published',
    description:
      'Publishes a paused listing again. Audited; answers the listing. 403 when an API key names another workspace\'s listing (send its `X-Workspace-Id`), or an API key acts without `X-Workspace-Id`, or the caller uses an owner device\'s JWT. 404 when no listing of the tenant has this id. 409 when the listing is not paused.',
    params: IdParams,
    responses: { 200: Listing },
    errors: transitionErrors,
  }),
  delistListing: defineRoute({
    method: 'POST',
    path: '/api/v1/marketplace/listings/{id}/delist',
    auth: 'owner-or-apikey',
    tags,
    summary: 'draft | published | paused -> delisted (terminal)',
    description:
      'Withdraws a draft, published or paused listing for good (`delisted`, terminal); running rentals continue to their end. Audited; answers the listing. 403 when an API key names another workspace\'s listing (send its `X-Workspace-Id`), or an API key acts without `X-Workspace-Id`, or the caller uses an owner device\'s JWT. 404 when no listing of the tenant has this id. 409 when it is already delisted.',
    params: IdParams,
    responses: { 200: Listing },
    errors: transitionErrors,
  }),
  createRental: defineRoute({
    method: 'POST',
    path: '/api/v1/marketplace/rentals',
    auth: 'any',
    tags,
    summary: 'Rent a published listing of another tenant (pending until the processor confirms)',
    description:
      'Rents another tenant\'s published listing: the price of the term is charged to `payment_method` (or the tenant\'s default) through the payment processor. The rental is `pending` until the processor confirms the charge, then `active`: a Skill Permission Token for the rented capabilities is issued to the renter and a cross-tenant encrypted rental room opens between the renter\'s owner devices and the rented agent. Both tenants\' owners receive `rental_updated`. Owners act with the owner JWT (and `X-Device-Id` naming their owner device where a device is needed); agents with their device JWT or API key. Answers 201. 400 when there is no payment method (neither given nor a default). 402 when the processor declines the payment (the rental is recorded as cancelled, `payment_failed`). 403 when `X-Device-Id` is not one of the caller\'s owner devices, or the caller uses an owner device\'s JWT. 404 when the listing is not published (or `X-Device-Id` is unknown). 409 when the listing is the tenant\'s own, or the listed agent is suspended or no longer meets the listing\'s tier or score floor. 502 when the payment processor fails.',
    body: CreateRentalRequest,
    responses: { 201: Rental },
    errors: [400, 401, 402, 403, 404, 409, 502],
  }),
  listRentals: defineRoute({
    method: 'GET',
    path: '/api/v1/marketplace/rentals',
    auth: 'any',
    tags,
    summary: 'Rentals of the tenant as renter (default) or developer',
    description:
      'The tenant\'s rentals, newest first, as renter (default) or as developer (`role`), optionally of one `status`, paged by `cursor` and `limit`. 400 when `cursor` is malformed. 403 also for an owner device\'s JWT.',
    query: RentalListQuery,
    responses: { 200: RentalPage },
    errors: [400, 401, 403],
  }),
  getRental: defineRoute({
    method: 'GET',
    path: '/api/v1/marketplace/rentals/{id}',
    auth: 'any',
    tags,
    summary: 'A rental (either party); the renter’s SPT while active',
    description:
      'One rental, for either party: listing, terms, amounts, status and its history; the renter also gets the rental\'s Skill Permission Token while it is active. 403 also for an owner device\'s JWT. 404 when the tenant is not a party to the rental.',
    params: IdParams,
    responses: { 200: Rental },
    errors: [400, 401, 403, 404],
  }),
  cancelRental: defineRoute({
    method: 'POST',
    path: '/api/v1/marketplace/rentals/{id}/cancel',
    auth: 'any',
    tags,
    summary: 'Cancel (renter): pending or active -> cancelled, the unused part refunded (design §8.24)',
    description:
      'The renter cancels a pending or active rental (`cancelled`): an active rental\'s unused part of the term is refunded through the processor and recorded in the ledger, its Skill Permission Token is revoked and the room closes. Both tenants\' owners receive `rental_updated`. Answers the rental. 403 when the caller is the developer side, or uses an owner device\'s JWT. 404 when the tenant is not a party. 409 when the rental is neither pending nor active, or has no captured charge to refund. 502 when the processor refuses the refund.',
    params: IdParams,
    responses: { 200: Rental },
    errors: [...transitionErrors, 502],
  }),
  completeRental: defineRoute({
    method: 'POST',
    path: '/api/v1/marketplace/rentals/{id}/complete',
    auth: 'any',
    tags,
    summary: 'Complete (renter): active -> completed',
    description:
      'The renter ends an active rental early as done (`completed`); the developer\'s earning stands. Both tenants\' owners receive `rental_updated`. Answers the rental. 403 when the caller is the developer side, or uses an owner device\'s JWT. 404 when the tenant is not a party. 409 when the rental is not active.',
    params: IdParams,
    responses: { 200: Rental },
    errors: transitionErrors,
  }),
  rentalMembers: defineRoute({
    method: 'GET',
    path: '/api/v1/marketplace/rentals/{id}/members',
    auth: 'any',
    tags,
    summary: 'Members of the rental room with their public keys (either party)',
    description:
      'The members of a rental\'s room with their public keys, for encrypting envelopes: the renter\'s ACTIVE owner devices and the rented agent device. Either party. 403 when an API key has not registered key material. 404 when the tenant is not a party. 409 when the rental was never activated (it has no room).',
    params: IdParams,
    responses: { 200: RentalMembers },
    errors: [400, 401, 403, 404, 409],
  }),
  sendRentalMessage: defineRoute({
    method: 'POST',
    path: '/api/v1/marketplace/rentals/{id}/messages',
    auth: 'any',
    tags,
    summary: 'Send ciphertext envelopes in the rental room (renter owner device with X-Device-Id, or the rented agent)',
    description:
      'Sends a message in a rental room: one encrypted envelope per recipient of the other side, from the renter\'s owner device (`X-Device-Id`) or the rented agent (device JWT or API key). Per envelope both tenants\' policies decide and the stricter wins (delivered and notified go out as `rental_message`; held waits for an owner; blocked keeps no ciphertext); while the rental is suspended every message not blocked is held until it resumes. Counts against the sender\'s 60 messages per minute. Answers 201 with each recipient\'s outcome. 400 when an owner names no `X-Device-Id`, a base64 field is malformed, or a recipient is not on the other side of the room. 403 when the sending device is not a member of the room on the caller\'s side. 404 when the tenant is not a party. 409 when the rental is not active or suspended, or its term has ended. 413 when a decoded ciphertext is larger than `LIMIT_MESSAGE_BYTES`. 429 also when the sender exceeds its message budget.',
    params: IdParams,
    headers: ActingDeviceHeader,
    body: RentalMessageInput,
    responses: { 201: RentalSendResult },
    errors: [400, 401, 403, 404, 409, 413],
  }),
  rentalMessages: defineRoute({
    method: 'GET',
    path: '/api/v1/marketplace/rentals/{id}/messages',
    auth: 'any',
    tags,
    summary: 'The calling device’s rental-room history, oldest first',
    description:
      'The calling device\'s rental-room history, oldest first, paged by `since` (the previous page\'s `next_cursor`) and `limit`; messages to it are marked delivered. 400 when an owner names no `X-Device-Id`. 403 when the device is not a member of the room. 404 when the tenant is not a party.',
    params: IdParams,
    headers: ActingDeviceHeader,
    query: RentalMessageQuery,
    responses: { 200: RentalMessagePage },
    errors: [400, 401, 403, 404],
  }),
  fileDispute: defineRoute({
    method: 'POST',
    path: '/api/v1/marketplace/rentals/{id}/dispute',
    auth: 'any',
    tags,
    summary: 'File a dispute (either party): active | suspended -> disputed',
    description:
      'Either party disputes an active or suspended rental (`disputed`) with a reason and optional evidence references (trace ids or audit event ids of either tenant); a platform operator resolves it. Audited in both tenants\' logs; both tenants\' owners receive `dispute_updated`. Answers 201 with the dispute. 400 when an evidence reference exists in neither tenant of the rental. 403 also for an owner device\'s JWT. 404 when the tenant is not a party. 409 when the rental is not active or suspended, or a dispute is already open.',
    params: IdParams,
    body: FileDisputeRequest,
    responses: { 201: Dispute },
    errors: transitionErrors,
  }),
  listDisputes: defineRoute({
    method: 'GET',
    path: '/api/v1/marketplace/disputes',
    auth: 'owner-any',
    tags,
    summary: 'Disputes: every tenant’s for platform operators, the tenant’s own otherwise',
    description:
      'Disputes newest first, optionally of one `status`, paged by `cursor` and `limit`: every tenant\'s for a platform operator (each listed dispute is audited in both tenants\' logs as viewed), the tenant\'s own otherwise. 400 when `cursor` is malformed. 403 also for an owner without a tenant who is not an operator.',
    query: DisputeListQuery,
    responses: { 200: DisputePage },
    errors: [400, 401, 403],
  }),
  getDispute: defineRoute({
    method: 'GET',
    path: '/api/v1/marketplace/disputes/{id}',
    auth: 'owner-any',
    tags,
    summary: 'A dispute with its notes (either party, or an operator)',
    description:
      'One dispute with its notes and evidence, for either party\'s owner or a platform operator (the operator\'s read is audited in both tenants\' logs). 403 also for an owner without a tenant who is not an operator. 404 when the dispute is not visible to the caller.',
    params: IdParams,
    responses: { 200: Dispute },
    errors: [400, 401, 403, 404],
  }),
  addDisputeNote: defineRoute({
    method: 'POST',
    path: '/api/v1/marketplace/disputes/{id}/notes',
    auth: 'any',
    tags,
    summary: 'Add a note and evidence to an open dispute (either party)',
    description:
      'Either party adds a note with optional evidence references to an open dispute. Audited in both tenants\' logs; answers 201 with the dispute. 400 when an evidence reference exists in neither tenant of the rental. 403 also for an owner device\'s JWT. 404 when the dispute is not visible to the tenant. 409 when the dispute is resolved.',
    params: IdParams,
    body: DisputeNoteRequest,
    responses: { 201: Dispute },
    errors: transitionErrors,
  }),
  resolveDispute: defineRoute({
    method: 'POST',
    path: '/api/v1/marketplace/disputes/{id}/resolve',
    auth: 'owner-any',
    tags,
    summary: 'Resolve a dispute (platform operator): disputed -> resolved, money through ledger and processor',
    description:
      'A platform operator resolves an open dispute (`resolved`) with an outcome: `refund` (what is left of the charge), `partial` (`amount_cents`, at most what is left) or `none`; the money moves through the ledger and the processor, and both tenants\' owners receive `dispute_updated`. Audited in both tenants\' logs; answers the dispute. 400 when `amount_cents` is missing for `partial`, given for another outcome, or above what is left. 403 also for an owner who is not a platform operator. 404 when the dispute (or its rental) is unknown. 409 when it is already resolved. 502 when the processor refuses the refund.',
    params: IdParams,
    body: ResolveDisputeRequest,
    responses: { 200: Dispute },
    errors: [...transitionErrors, 502],
  }),
  listPayouts: defineRoute({
    method: 'GET',
    path: '/api/v1/marketplace/payouts',
    auth: 'any',
    tags,
    summary: 'Payouts to the tenant, newest first',
    description:
      'Payouts of the tenant\'s marketplace earnings, newest first, with amount, status and processor reference, paged by `cursor` and `limit`. 400 when `cursor` is malformed. 403 also for an owner device\'s JWT.',
    query: PayoutListQuery,
    responses: { 200: PayoutPage },
    errors: [400, 401, 403],
  }),
  payoutSummary: defineRoute({
    method: 'GET',
    path: '/api/v1/marketplace/payouts/summary',
    auth: 'any',
    tags,
    summary: 'Earnings summary: earned, fees, paid, pending, balance, next payout date',
    description:
      'The tenant\'s earnings as developer: earned, platform fees, paid out, pending, balance and the next payout date. 403 also for an owner device\'s JWT.',
    responses: { 200: PayoutSummary },
    errors: [401, 403],
  }),
  connectDashboard: defineRoute({
    method: 'GET',
    path: '/api/v1/marketplace/connect/dashboard',
    auth: 'any',
    tags,
    summary: 'Link to the payment processor’s dashboard (onboarding when no ready account yet)',
    description:
      'A link to the payment processor\'s dashboard for the tenant\'s connected account, which is created on the first call; while the account is not ready for payouts the link is an onboarding link (`kind: "onboarding"`). 403 also for an owner device\'s JWT. 502 when the payment processor fails.',
    responses: { 200: ConnectDashboard },
    errors: [401, 403, 502],
  }),
  getPaymentMethod: defineRoute({
    method: 'GET',
    path: '/api/v1/marketplace/payment-method',
    auth: 'any',
    tags,
    summary: 'The tenant’s default payment method',
    description: 'The tenant\'s default payment method (used when a rental names none), or null. 403 also for an owner device\'s JWT.',
    responses: { 200: PaymentMethodInfo },
    errors: [401, 403],
  }),
  setPaymentMethod: defineRoute({
    method: 'PUT',
    path: '/api/v1/marketplace/payment-method',
    auth: 'owner',
    tags,
    summary: 'Set the tenant’s default payment method (used when a rental names none)',
    description:
      'Sets the tenant\'s default payment method: a processor payment-method id (a Stripe `pm_…`, or one of the local processor\'s test methods). Audited without the value; answers it.',
    body: PaymentMethodRequest,
    responses: { 200: PaymentMethodInfo },
    errors: [400, 401, 403],
  }),
  paymentProcessor: defineRoute({
    method: 'GET',
    path: '/api/v1/marketplace/processor',
    auth: 'public',
    tags,
    summary: 'The payment processor that charges rentals, and how a client makes a payment method for it',
    description:
      'Which payment processor charges rentals and how a client makes a payment method for it: `stripe` (when `STRIPE_SECRET_KEY` is set) with `publishable_key` (`STRIPE_PUBLISHABLE_KEY`, null when unset) for Stripe.js, whose `pm_…` id the rental then names; or `local`, the embedded default, with its `test_payment_methods`.',
    responses: { 200: PaymentProcessorInfo },
    errors: [401, 429],
  }),
  verifyLedger: defineRoute({
    method: 'GET',
    path: '/api/v1/marketplace/ledger/verify',
    auth: 'owner-any',
    tags,
    summary: 'Check that every ledger transaction balances (platform operators)',
    description:
      'Platform operators check the marketplace ledger: every transaction\'s entries must sum to zero; answers whether it balances, the imbalance and the unbalanced transactions. 403 also for an owner who is not a platform operator (`PLATFORM_OPERATOR_SUBS`).',
    responses: { 200: LedgerVerification },
    errors: [401, 403],
  }),
  stripeWebhook: defineRoute({
    method: 'POST',
    path: '/api/v1/marketplace/webhooks/stripe',
    auth: 'none',
    tags,
    summary: 'Stripe events (Stripe-Signature verified, each event processed once)',
    description:
      'Receives Stripe\'s events (charges, refunds, payouts, account updates); the raw body\'s `Stripe-Signature` is the credential, and each event is processed once. 400 when the signature is missing or does not verify. 404 when Stripe is not the configured processor (`STRIPE_SECRET_KEY` unset).',
    contentTypes: ['application/json'],
    responses: { 200: WebhookAck },
    errors: [400, 404],
  }),
  localProcessorWebhook: defineRoute({
    method: 'POST',
    path: '/api/v1/marketplace/webhooks/local',
    auth: 'none',
    tags,
    summary: 'Events of the embedded local processor (Standard Webhooks signature, each processed once)',
    description:
      'Receives the embedded local processor\'s events (Standard Webhooks signature over the raw body), each processed once, so the local processor exercises the same asynchronous paths Stripe does. 400 when the signature is missing or does not verify. 404 when Stripe is the configured processor.',
    contentTypes: ['application/json'],
    responses: { 200: WebhookAck },
    errors: [400, 404],
  }),
};

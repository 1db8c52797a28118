/**
 * Set-up of bench/marketplace: developer tenants with a certified (or enterprise) hub identity
 * bound to an ACTIVE agent device, made through the API like marketplace-fixtures.ts does (an
 * operator token of the development identity provider grants the tier); then `listings`
 * PUBLISHED listings inserted directly with SQL (deterministic pseudo-random titles, categories,
 * capabilities, prices and tiers), their `search_document` filled by one bulk UPDATE with the
 * expression of `refreshSearchDocument` (listings-repo.ts), then ANALYZE. Also the filter mix of
 * the search measurement, as API query strings and as the `ListingFilter` of the same search.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type pg from 'pg';
import type { ListingFilter } from '../../packages/server/src/modules/marketplace/listings-repo.js';
import { SEARCH_CONFIG } from '../../packages/server/src/modules/hub/repo.js';
import { hubOwnerKey } from '@parley/server/testing';
import { call, enrollAgent, newTenant } from '../relay/setup.js';

export const ADJECTIVES = ['fast', 'deep', 'reliable', 'multilingual', 'secure', 'autonomous', 'expert', 'budget', 'premium', 'realtime'];
export const NOUNS = [
  'research',
  'translation',
  'summarization',
  'coding',
  'review',
  'analytics',
  'support',
  'scheduling',
  'compliance',
  'forecasting',
  'design',
  'testing',
  'marketing',
  'contracts',
  'accounting',
  'pipelines',
  'security',
  'writing',
  'search',
  'operations',
];
export const CATEGORIES = ['research', 'engineering', 'data', 'support', 'legal', 'finance', 'marketing', 'operations', 'security', 'design', 'writing', 'sales'];
export const CAPABILITIES = [
  'research',
  'summarize',
  'translate',
  'code',
  'review',
  'sql',
  'charts',
  'email',
  'calendar',
  'contracts',
  'invoices',
  'pentest',
  'ui',
  'copywriting',
  'crm',
  'tickets',
  'etl',
  'forecast',
  'audit',
  'seo',
  'scraping',
  'ocr',
  'speech',
  'vision',
  'planning',
  'qa',
  'docs',
  'triage',
  'pricing',
  'outreach',
];
const MODELS = ['per_task', 'per_hour', 'per_day', 'monthly'];

/** Deterministic PRNG (mulberry32), so every run seeds the same catalogue. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const pick = <T>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;

/** A developer tenant with one listed identity. */
export interface Developer {
  tenantId: string;
  identityId: string;
  hubAddress: string;
  tier: 'certified' | 'enterprise';
}

/** `n` developers (developer 0 enterprise, the others certified), through the API as an operator would certify them. */
export async function provisionDevelopers(app: FastifyInstance, n: number): Promise<Developer[]> {
  const operator = { authorization: `Bearer ${await app.parley.devIdp!.mint('bench-operator@example.com', { operator: true })}` };
  const devs: Developer[] = [];
  for (let i = 0; i < n; i++) {
    const { tenantId, auth } = await newTenant(app, `bench-dev-${i}@example.com`, `Bench developer ${i}`);
    const agent = await enrollAgent(app, auth, `listed-agent-${i}`);
    const identity = await call(app, 'POST', '/hub/identities', 201, auth, {
      hub_address: `bench-dev-${i}-${Date.now().toString(36)}`,
      display_name: `Bench agent ${i}`,
      device_id: agent.deviceId,
      public_key: hubOwnerKey(),
      capabilities: ['research', 'summarize'],
    });
    const tier = i === 0 ? 'enterprise' : 'certified';
    await call(app, 'POST', `/hub/identities/${identity.id}/tier`, 200, operator, { tier, reason: 'bench' });
    devs.push({ tenantId, identityId: identity.id, hubAddress: identity.hub_address, tier });
  }
  return devs;
}

/**
 * Insert `count` published listings spread round-robin over `devs` (chunks of 2,000 rows through
 * `unnest`), fill `search_document` in one UPDATE, ANALYZE. Answers the ids (insertion order).
 */
export async function seedListings(sql: pg.Client, devs: Developer[], count: number): Promise<string[]> {
  const r = prng(20_240_601);
  const now = Date.now();
  const ids: string[] = [];
  const CHUNK = 2000;
  for (let from = 0; from < count; from += CHUNK) {
    const cols: unknown[][] = Array.from({ length: 16 }, () => []);
    for (let i = from; i < Math.min(count, from + CHUNK); i++) {
      const d = devs[i % devs.length]!;
      const [n1, n2, n3, n4] = [pick(r, NOUNS), pick(r, NOUNS), pick(r, NOUNS), pick(r, NOUNS)];
      const caps = [...new Set(Array.from({ length: 1 + Math.floor(r() * 4) }, () => pick(r, CAPABILITIES)))];
      // Prices log-uniform between 1.00 and 1,000.00 USD.
      const price = Math.round(100 * 10 ** (3 * r()));
      const publishedAt = new Date(now - Math.floor(r() * 30 * 86_400_000));
      const id = randomUUID();
      ids.push(id);
      const row = [
        id,
        d.tenantId,
        d.identityId,
        d.hubAddress,
        `${pick(r, ADJECTIVES)} ${n1} and ${n2} agent`,
        `Handles ${n3} and ${n4} for teams; ${pick(r, ADJECTIVES)} turnaround, audited outputs.`,
        pick(r, CATEGORIES),
        JSON.stringify(caps),
        pick(r, MODELS),
        price,
        d.tier === 'enterprise' && r() < 0.3 ? 'enterprise' : 'certified',
        d.tier,
        `bench-dev@example.com`,
        new Date(publishedAt.getTime() - 3_600_000),
        publishedAt,
        publishedAt,
      ];
      row.forEach((v, j) => cols[j]!.push(v));
    }
    await sql.query(
      `insert into marketplace_listings (id, tenant_id, identity_id, hub_address, title, description, category, capabilities, pricing_model, price_cents,
                                         min_tier, trust_tier, created_by, created_at, updated_at, published_at, status)
       select id, tenant_id, identity_id, hub_address, title, description, category, capabilities::jsonb, pricing_model, price_cents,
              min_tier, trust_tier, created_by, created_at, updated_at, published_at, 'published'
       from unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::int[],
                   $11::text[], $12::text[], $13::text[], $14::timestamptz[], $15::timestamptz[], $16::timestamptz[])
         as t(id, tenant_id, identity_id, hub_address, title, description, category, capabilities, pricing_model, price_cents,
              min_tier, trust_tier, created_by, created_at, updated_at, published_at)`,
      cols,
    );
  }
  // The expression of listings-repo.ts `refreshSearchDocument`, for every row at once.
  const cfg = `'${SEARCH_CONFIG}'::regconfig`;
  await sql.query(`
    update marketplace_listings set search_document =
      setweight(to_tsvector(${cfg}, title), 'A')
      || setweight(to_tsvector(${cfg}, category || ' ' || coalesce((select string_agg(c, ' ') from jsonb_array_elements_text(capabilities) c), '')), 'B')
      || setweight(to_tsvector(${cfg}, description), 'C')`);
  await sql.query('vacuum analyze marketplace_listings');
  return ids;
}

/** One search of the mix: its API query (besides `limit`) and the same search as a `ListingFilter`. */
export interface Search {
  query: Record<string, string>;
  filter: ListingFilter;
}

/** The filter kinds of the mix, each a function of the request number (deterministic variety). */
export const FILTERS: Record<string, { describe: string; make: (i: number) => Search }> = {
  newest: { describe: 'no filter: newest published first', make: () => ({ query: {}, filter: {} }) },
  text: {
    describe: 'query=<one title/description word> (ranked)',
    make: (i) => ({ query: { query: NOUNS[i % NOUNS.length]! }, filter: { text: NOUNS[i % NOUNS.length]! } }),
  },
  text2: {
    describe: 'query=<two words> (both must match, ranked)',
    make: (i) => {
      const q = `${ADJECTIVES[i % ADJECTIVES.length]} ${NOUNS[(i * 7) % NOUNS.length]}`;
      return { query: { query: q }, filter: { text: q } };
    },
  },
  category: {
    describe: 'category=<one of 12>',
    make: (i) => ({ query: { category: CATEGORIES[i % CATEGORIES.length]! }, filter: { category: CATEGORIES[i % CATEGORIES.length]! } }),
  },
  capability: {
    describe: 'capability=<one of 30> (jsonb @>)',
    make: (i) => ({ query: { capability: CAPABILITIES[i % CAPABILITIES.length]! }, filter: { capability: CAPABILITIES[i % CAPABILITIES.length]! } }),
  },
  tier: { describe: 'tier=enterprise', make: () => ({ query: { tier: 'enterprise' }, filter: { minTier: 'enterprise' } }) },
  price: {
    describe: 'min_price_cents..max_price_cents (a x4 range)',
    make: (i) => {
      const min = 200 * (1 + (i % 50));
      return { query: { min_price_cents: String(min), max_price_cents: String(min * 4) }, filter: { minPriceCents: min, maxPriceCents: min * 4 } };
    },
  },
  combined: {
    describe: 'query + category + tier=certified + max_price_cents',
    make: (i) => {
      const text = NOUNS[i % NOUNS.length]!;
      const category = CATEGORIES[(i * 5) % CATEGORIES.length]!;
      const max = 5000 + 1000 * (i % 20);
      return { query: { query: text, category, tier: 'certified', max_price_cents: String(max) }, filter: { text, category, minTier: 'certified', maxPriceCents: max } };
    },
  },
};

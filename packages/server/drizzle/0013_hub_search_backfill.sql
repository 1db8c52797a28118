-- Search documents of hub identities registered before issue 5 (design §8.15 search): the same
-- expression as SEARCH_DOCUMENT in src/modules/hub/repo.ts ('english' text search configuration;
-- A = address and display name, B = capability names, C = description, D = capability descriptions).
UPDATE "hub_identities" SET "search_document" =
  setweight(to_tsvector('english'::regconfig, "hub_identities"."hub_address" || ' ' || "hub_identities"."display_name"), 'A')
  || setweight(to_tsvector('english'::regconfig, coalesce((
       select string_agg(n, ' ') from (
         select jsonb_array_elements_text("hub_identities"."capabilities") as n
         union select "hub_capabilities"."name" from "hub_capabilities" where "hub_capabilities"."identity_id" = "hub_identities"."id"
       ) as names), '')), 'B')
  || setweight(to_tsvector('english'::regconfig, coalesce("hub_identities"."description", '')), 'C')
  || setweight(to_tsvector('english'::regconfig, coalesce((
       select string_agg("hub_capabilities"."description", ' ') from "hub_capabilities" where "hub_capabilities"."identity_id" = "hub_identities"."id"
     ), '')), 'D')
WHERE "search_document" IS NULL;

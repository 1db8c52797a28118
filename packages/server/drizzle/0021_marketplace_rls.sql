-- Row-level security for the marketplace tables of 0020 (design §4, §8.23–§8.26).
-- Tenant tables: the policy of 0001_rls.sql.
SELECT parley_enable_tenant_rls(t::regclass)
FROM unnest(ARRAY['marketplace_listings','marketplace_payouts','marketplace_connected_accounts','marketplace_payment_methods']) AS t;
--> statement-breakpoint
-- Published listings are a public catalogue: every scope (another tenant's, or an anonymous one with
-- no tenant) may READ them; writes stay with the owning tenant (the policy above). Permissive
-- policies are OR-ed by PostgreSQL.
CREATE POLICY published_listings_read ON marketplace_listings FOR SELECT USING (status = 'published');
--> statement-breakpoint
-- Two-party tables: the renter (tenant_id) and the developer (partner_tenant_id) both see the row.
SELECT parley_enable_two_party_rls(t::regclass)
FROM unnest(ARRAY['marketplace_rentals','marketplace_disputes','marketplace_dispute_notes','marketplace_rental_messages']) AS t;
--> statement-breakpoint
-- The ledger and the processor-event registry are platform tables (money of every tenant and of the
-- platform itself): reached through crossTenant() by the ledger and the webhook handler only.
REVOKE ALL ON ledger_transactions, ledger_entries FROM parley_app;
--> statement-breakpoint
-- processor_events holds processor event ids and types only (no tenant data): the application role
-- records an event as processed in the transaction that handles it (design §8.26: once per event).
REVOKE ALL ON processor_events FROM parley_app;
--> statement-breakpoint
GRANT SELECT, INSERT ON processor_events TO parley_app;
--> statement-breakpoint
-- The ledger is append-only: balanced transactions are never edited or removed.
CREATE OR REPLACE FUNCTION parley_ledger_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'the ledger is append-only';
END $$;
--> statement-breakpoint
CREATE TRIGGER ledger_entries_append_only BEFORE UPDATE OR DELETE ON ledger_entries FOR EACH ROW EXECUTE FUNCTION parley_ledger_append_only();
--> statement-breakpoint
CREATE TRIGGER ledger_transactions_append_only BEFORE UPDATE OR DELETE ON ledger_transactions FOR EACH ROW EXECUTE FUNCTION parley_ledger_append_only();
--> statement-breakpoint
GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO parley_app;
--> statement-breakpoint
-- The application role appends to the ledger through this function only (design §8.24): one
-- transaction per (kind, reference) — a retried step posts nothing twice (answers NULL) — whose
-- entries must sum to zero, written in the caller's database transaction. SECURITY DEFINER: it runs
-- with the migration owner's rights on the platform tables; callers cannot write them otherwise.
CREATE OR REPLACE FUNCTION parley_ledger_post(p_id uuid, p_kind text, p_reference text, p_rental uuid, p_payout uuid, p_memo text, p_entries jsonb)
RETURNS uuid LANGUAGE plpgsql SECURITY DEFINER SET search_path = public AS $$
DECLARE
  v_sum bigint;
  v_id uuid;
BEGIN
  SELECT coalesce(sum((e->>'amount_cents')::bigint), 0) INTO v_sum FROM jsonb_array_elements(p_entries) e;
  IF v_sum <> 0 OR jsonb_array_length(p_entries) < 2 THEN
    RAISE EXCEPTION 'unbalanced ledger transaction % %: entries sum to %', p_kind, p_reference, v_sum;
  END IF;
  INSERT INTO ledger_transactions (id, kind, reference, rental_id, payout_id, memo)
  VALUES (p_id, p_kind, p_reference, p_rental, p_payout, p_memo)
  ON CONFLICT (kind, reference) DO NOTHING
  RETURNING id INTO v_id;
  IF v_id IS NULL THEN
    RETURN NULL;
  END IF;
  INSERT INTO ledger_entries (transaction_id, account, party_tenant_id, amount_cents)
  SELECT v_id, e->>'account', nullif(e->>'party_tenant_id', '')::uuid, (e->>'amount_cents')::bigint FROM jsonb_array_elements(p_entries) e;
  RETURN v_id;
END $$;
--> statement-breakpoint
-- Sums of one tenant's ledger entries by account and transaction kind, for that tenant's own scope
-- only (the tenant must be the transaction's app.tenant_id, or the caller the connection owner).
CREATE OR REPLACE FUNCTION parley_ledger_sums(p_tenant uuid)
RETURNS TABLE (account text, kind text, amount_cents bigint) LANGUAGE plpgsql SECURITY DEFINER SET search_path = public AS $$
BEGIN
  IF p_tenant IS DISTINCT FROM nullif(current_setting('app.tenant_id', true), '')::uuid THEN
    RAISE EXCEPTION 'ledger sums of another tenant';
  END IF;
  RETURN QUERY SELECT e.account, t.kind, sum(e.amount_cents)::bigint
    FROM ledger_entries e JOIN ledger_transactions t ON t.id = e.transaction_id
    WHERE e.party_tenant_id = p_tenant GROUP BY e.account, t.kind;
END $$;
--> statement-breakpoint
REVOKE ALL ON FUNCTION parley_ledger_post(uuid, text, text, uuid, uuid, text, jsonb) FROM PUBLIC;
--> statement-breakpoint
REVOKE ALL ON FUNCTION parley_ledger_sums(uuid) FROM PUBLIC;
--> statement-breakpoint
GRANT EXECUTE ON FUNCTION parley_ledger_post(uuid, text, text, uuid, uuid, text, jsonb) TO parley_app;
--> statement-breakpoint
GRANT EXECUTE ON FUNCTION parley_ledger_sums(uuid) TO parley_app;
--> statement-breakpoint
-- Listings carry their identity's live tier and score (searches by other tenants cannot read
-- hub_identities under RLS): copied on every change of the identity, in the same transaction.
CREATE OR REPLACE FUNCTION parley_listing_trust_sync() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE marketplace_listings SET trust_tier = NEW.trust_tier, trust_score = NEW.trust_score
  WHERE identity_id = NEW.id AND (trust_tier IS DISTINCT FROM NEW.trust_tier OR trust_score IS DISTINCT FROM NEW.trust_score);
  RETURN NEW;
END $$;
--> statement-breakpoint
CREATE TRIGGER hub_identities_listing_trust AFTER UPDATE OF trust_tier, trust_score ON hub_identities FOR EACH ROW EXECUTE FUNCTION parley_listing_trust_sync();

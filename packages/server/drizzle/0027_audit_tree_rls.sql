-- The transparency log over the audit events (design §8.33; modules/audit/tree.ts). The events
-- stored before this migration get their tree here, level by level: leaves first
-- (SHA-256(0x00 || chain hash bytes), index seq - 1), then each complete pair of a level makes
-- its parent (SHA-256(0x01 || left || right)) until a level makes none.
INSERT INTO audit_tree_nodes (tenant_id, level, idx, hash)
SELECT tenant_id, 0, seq - 1, sha256('\x00'::bytea || decode(hash, 'hex')) FROM audit_events;
--> statement-breakpoint
DO $$
DECLARE
  lvl smallint := 0;
  made bigint;
BEGIN
  LOOP
    INSERT INTO audit_tree_nodes (tenant_id, level, idx, hash)
    SELECT l.tenant_id, lvl + 1, l.idx / 2, sha256('\x01'::bytea || l.hash || r.hash)
    FROM audit_tree_nodes l
    JOIN audit_tree_nodes r ON r.tenant_id = l.tenant_id AND r.level = lvl AND r.idx = l.idx + 1
    WHERE l.level = lvl AND l.idx % 2 = 0;
    GET DIAGNOSTICS made = ROW_COUNT;
    EXIT WHEN made = 0;
    lvl := lvl + 1;
  END LOOP;
END $$;
--> statement-breakpoint
-- Row-level security (design §4, the policy of 0001_rls.sql). Like the events, the tree and the
-- checkpoints are append-only for the application role: no UPDATE or DELETE grant.
SELECT parley_enable_tenant_rls(t::regclass) FROM unnest(ARRAY['audit_tree_nodes','audit_checkpoints']) AS t;
--> statement-breakpoint
REVOKE UPDATE, DELETE ON audit_tree_nodes, audit_checkpoints FROM parley_app;

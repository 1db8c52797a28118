/**
 * Client-side scan rules (contract §4.14, §6.1 rule 5): a versioned, owner-editable rule set that
 * clients fetch and run on outgoing plaintext before encryption. Each save is a new version
 * (current + 1); old versions are kept. A tenant that saved none gets the built-in set, version 0
 * ({@link DEFAULT_SCAN_RULES}). The `scan_rules_enabled` tenant setting (design §8.22) turns the
 * served set off (empty rules, same version).
 *
 * The service only compiles patterns to check them (JavaScript regular expressions, the same
 * engine the SDK runs them with); it never executes them against data.
 */
import { randomUUID } from 'node:crypto';
import type { ScanRule, ScanRuleSet, ScanRuleVersion } from '@parley/protocol';
import type { Db, Tx } from '../../db/client.js';
import { withTenant } from '../../db/tenant.js';
import { appendAudit } from '../audit/index.js';
import { badRequest } from '../../lib/errors.js';
import type { SettingsService } from '../settings/index.js';
import { DEFAULT_SCAN_RULES } from './defaults.js';
import * as repo from './repo.js';

/**
 * 400 unless every rule id is unique and every pattern compiles with its flags.
 * @throws AppError 400 naming the offending rule.
 */
export function checkRules(rules: readonly ScanRule[]): void {
  const seen = new Set<string>();
  for (const r of rules) {
    if (seen.has(r.id)) throw badRequest(`duplicate rule id ${r.id}`);
    seen.add(r.id);
    try {
      new RegExp(r.pattern, r.flags ?? '');
    } catch (err) {
      throw badRequest(`rule ${r.id}: invalid regular expression: ${(err as Error).message}`);
    }
  }
}

export class ScanRuleService {
  constructor(
    private readonly db: Db,
    private readonly settings: Pick<SettingsService, 'read'>,
  ) {}

  /** The tenant's current rule set (built-in version 0 when none saved; empty when scanning is off). */
  current(tenantId: string): Promise<ScanRuleSet> {
    return withTenant(this.db, tenantId, (tx) => this.view(tx, tenantId));
  }

  /**
   * Save `rules` as the next version (current + 1; versions of one tenant are serialized by a
   * transaction-scoped lock). Answers the new current set.
   * @throws AppError 400 for a duplicate rule id or a pattern that does not compile.
   */
  replace(tenantId: string, createdBy: string, rules: ScanRule[]): Promise<ScanRuleSet> {
    checkRules(rules);
    return withTenant(this.db, tenantId, async (tx) => {
      await repo.lockRuleSets(tx, tenantId);
      const version = ((await repo.latestRuleSet(tx))?.version ?? 0) + 1;
      await repo.insertRuleSet(tx, { id: randomUUID(), tenantId, version, rules, createdBy });
      await appendAudit(tx, tenantId, { type: 'scan_rules.updated', actor: createdBy, data: { version, rule_count: rules.length } });
      return this.view(tx, tenantId);
    });
  }

  /** Every saved version, newest first (the built-in version 0 is not listed). */
  versions(tenantId: string): Promise<ScanRuleVersion[]> {
    return withTenant(this.db, tenantId, async (tx) =>
      (await repo.listVersions(tx)).map((v) => ({ version: v.version, rule_count: Number(v.ruleCount), created_by: v.createdBy, created_at: v.createdAt.toISOString() })),
    );
  }

  private async view(tx: Tx, tenantId: string): Promise<ScanRuleSet> {
    const row = await repo.latestRuleSet(tx);
    const { scan_rules_enabled: enabled } = await this.settings.read(tx, tenantId);
    const set = row
      ? { version: row.version, rules: row.rules as ScanRule[], updated_at: row.createdAt.toISOString() }
      : { version: 0, rules: [...DEFAULT_SCAN_RULES], updated_at: null };
    return enabled ? { ...set, enabled } : { ...set, rules: [], enabled };
  }
}

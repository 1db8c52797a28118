/**
 * Outbound scanner from the tenant's scan rule set (contract §4.14, §6.1 rule 5):
 * `scannerFromRules(await client.getScanRules())` builds an {@link OutboundScanner} for the
 * realtime client's `scanner` option. The first matching `block` rule blocks the send (the
 * reason names the rule, never the matched text); `warn` matches are reported to `onWarn` and the
 * send proceeds. Binary plaintexts are decoded as UTF-8 before matching.
 */
import type { ScanRule, ScanRuleSet } from '@parley/protocol';
import type { OutboundScanner, ScanMeta } from './types.js';

/** A `warn` match reported by the scanner (the rule, not the matched text). */
export interface ScanWarning {
  rule: Pick<ScanRule, 'id' | 'name' | 'severity'>;
  meta: ScanMeta;
}

export interface ScannerFromRulesOptions {
  /** Called for every `warn` rule that matched a sent plaintext. */
  onWarn?: (warning: ScanWarning) => void;
}

const decoder = new TextDecoder();

/**
 * Compile a rule set into an outbound scanner. Block rules are checked before warn rules.
 * @throws SyntaxError when a pattern does not compile (the service refuses such sets).
 */
export function scannerFromRules(set: Pick<ScanRuleSet, 'rules'>, options: ScannerFromRulesOptions = {}): OutboundScanner {
  const compiled = set.rules.map((rule) => ({ rule, re: new RegExp(rule.pattern, (rule.flags ?? '').replace(/[gy]/g, '')) }));
  const blocks = compiled.filter((c) => c.rule.action === 'block');
  const warns = compiled.filter((c) => c.rule.action === 'warn');
  return (plaintext, meta) => {
    const text = typeof plaintext === 'string' ? plaintext : decoder.decode(plaintext);
    const hit = blocks.find((c) => c.re.test(text));
    if (hit) return { blocked: true, reason: `scan rule ${hit.rule.id} (${hit.rule.name}, ${hit.rule.severity})` };
    for (const c of warns) {
      if (c.re.test(text)) options.onWarn?.({ rule: { id: c.rule.id, name: c.rule.name, severity: c.rule.severity }, meta });
    }
    return { blocked: false };
  };
}

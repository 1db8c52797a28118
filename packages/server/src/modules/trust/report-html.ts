/**
 * The compliance report (report.ts) as one standalone HTML page (`GET /trust-scores/{agent_id}/report?format=html`
 * or `Accept: text/html`): inline CSS, no scripts, no external resources, so it can be archived
 * and opened offline. Every value from the report, numbers included, goes through `escape-html`;
 * only the fixed markup of this file is written unescaped.
 */
import escapeHtml from 'escape-html';
import type { TrustReport } from '@parley/protocol';
import { TRUST_DIMENSIONS, TRUST_WINDOWS } from './types.js';

/** Escape any value for HTML text or a quoted attribute (null → an em dash). */
const e = (v: unknown): string => (v === null || v === undefined ? '&mdash;' : escapeHtml(typeof v === 'string' ? v : String(v)));
/** A score 0.0-1.0 with three decimals (plain text: the table cells escape it). */
const score = (v: number): string => v.toFixed(3);

const row = (cells: unknown[], head = false): string => `<tr>${cells.map((c) => (head ? `<th>${e(c)}</th>` : `<td>${e(c)}</td>`)).join('')}</tr>`;
const table = (head: unknown[], rows: unknown[][]): string =>
  `<table><thead>${row(head, true)}</thead><tbody>${rows.length ? rows.map((r) => row(r)).join('') : `<tr><td colspan="${head.length}">none</td></tr>`}</tbody></table>`;

/**
 * Download file name: `parley-compliance-<agent>-<YYYY-MM-DD>.html`, `<agent>` = the hub address
 * (`[a-z0-9-]`) or the device id, the date = the report's UTC generation day. Safe in a quoted
 * `Content-Disposition` parameter (no quote, backslash or non-ASCII character can occur).
 */
export function reportFileName(r: TrustReport): string {
  const agent = (r.agent.hub_address ?? r.agent.agent_id).replace(/[^a-z0-9-]/gi, '-');
  return `parley-compliance-${agent}-${r.generated_at.slice(0, 10)}.html`;
}

/** Render the report as a complete HTML document (UTF-8). */
export function renderReportHtml(r: TrustReport): string {
  const a = r.agent;
  const title = `Parley compliance report: ${a.hub_address ?? a.agent_id}`;
  const scoreRows = TRUST_DIMENSIONS.map((d) => [d, ...TRUST_WINDOWS.map((w) => `${score(r.scores[w].dimensions[d])} (${r.scores[w].sources[d]})`)]);
  const drift = r.drift;
  const driftRows = TRUST_DIMENSIONS.map((d) => {
    const x = drift.dimensions[d];
    return x ? [d, x.psi.toFixed(4), x.status, x.baseline_samples, x.current_samples] : [d, null, 'no data', null, null];
  });
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${e(title)}</title>
<style>
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2rem auto;max-width:60rem;color:#1d2330;padding:0 1rem}
h1{font-size:1.5rem}h2{font-size:1.15rem;margin-top:2rem;border-bottom:1px solid #d5d9e0;padding-bottom:.25rem}
table{border-collapse:collapse;width:100%;margin:.5rem 0}th,td{border:1px solid #d5d9e0;padding:.3rem .5rem;text-align:left;font-size:.9rem}
th{background:#f2f4f7}dl{display:grid;grid-template-columns:12rem 1fr;gap:.25rem 1rem}dt{font-weight:600}dd{margin:0}
.alert{color:#a4161a;font-weight:600}.ok{color:#2b7a0b}footer{margin-top:2rem;font-size:.8rem;color:#5b6473}
</style>
</head>
<body>
<h1>${e(title)}</h1>
<dl>
<dt>Report id</dt><dd>${e(r.report_id)}</dd>
<dt>Generated at</dt><dd>${e(r.generated_at)}</dd>
<dt>Agent id</dt><dd>${e(a.agent_id)}</dd>
<dt>Display name</dt><dd>${e(a.display_name)}</dd>
<dt>Hub address</dt><dd>${e(a.hub_address)}</dd>
<dt>DID</dt><dd>${e(a.did)}</dd>
<dt>Trust tier</dt><dd>${e(a.tier)}</dd>
<dt>Enrolled at</dt><dd>${e(a.enrolled_at)}</dd>
</dl>
<h2>Trust scores</h2>
${table(
  ['', ...TRUST_WINDOWS],
  [
    ['composite', ...TRUST_WINDOWS.map((w) => score(r.scores[w].composite_score))],
    ['percentile', ...TRUST_WINDOWS.map((w) => r.scores[w].percentile)],
    ['computed at', ...TRUST_WINDOWS.map((w) => r.scores[w].computed_at)],
  ],
)}
${table(['dimension (source)', ...TRUST_WINDOWS], scoreRows)}
<h2>Tier changes</h2>
${table(['changed at', 'from', 'to', 'reason'], r.tier_changes.map((c) => [c.changed_at, c.from_tier, c.to_tier, c.reason]))}
<h2>Policy compliance (last ${e(r.policy.period_days)} days)</h2>
<dl>
<dt>Evaluations</dt><dd>${e(r.policy.evaluations)}</dd>
<dt>Violations (block, hold)</dt><dd>${e(r.policy.violations)}</dd>
</dl>
${table(['outcome', 'count'], Object.entries(r.policy.by_outcome).sort(([x], [y]) => x.localeCompare(y)))}
<h2>Behavioural drift (${e(drift.window)})</h2>
<p class="${drift.alert ? 'alert' : 'ok'}">${drift.alert ? 'Alert: significant drift in at least one dimension' : 'No significant drift'}</p>
<dl>
<dt>Baseline</dt><dd>${drift.baseline ? `${e(drift.baseline.window_start)} to ${e(drift.baseline.window_end)} (${e(drift.baseline.reason)}, established ${e(drift.baseline.established_at)})` : 'not established yet'}</dd>
</dl>
${table(['dimension', 'PSI', 'status', 'baseline days', 'current days'], driftRows)}
<h2>Grants and audit</h2>
<dl>
<dt>Active grants</dt><dd>${e(r.active_grants)}</dd>
<dt>Audit events (last ${e(r.audit.period_days)} days)</dt><dd>${e(r.audit.events_30d)}</dd>
<dt>Audit chain</dt><dd class="${r.audit.chain_valid ? 'ok' : 'alert'}">${r.audit.chain_valid ? 'verified' : 'BROKEN'}</dd>
</dl>
<footer>Generated by Parley. Scores are computed server-side from telemetry, message cadence, policy compliance and device health (contract §2.9).</footer>
</body>
</html>
`;
}

/**
 * Client-side scan rules (contract §4.14, §6.1 rule 5; design §8.22): the current set (version 0 is
 * the built-in one), add a rule or remove one; each change saves the whole set as the next
 * version. A pattern that does not compile is the server's 400, shown in place.
 */
import { SCAN_ACTIONS, SCAN_SEVERITIES, type ScanRule } from '@parley/sdk';
import { useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { useOwner } from '../../app/owner-context';
import { Badge, ConfirmButton, Empty, ErrorNote, Head, Loading, Section, Time } from '../../components/ui';
import { useFormDraft } from '../../lib/json-draft';
import { useRootMutation } from '../../lib/mutate';
import { EnumSelect, Field } from '../form-parts';

type Action = ScanRule['action'];
type Severity = ScanRule['severity'];
interface RuleForm {
  id: string;
  name: string;
  pattern: string;
  flags: string;
  action: Action;
  severity: Severity;
}
const NEW_RULE: RuleForm = Object.freeze({ id: '', name: '', pattern: '', flags: '', action: 'warn', severity: 'medium' });

function AddRule({ onAdd, pending }: { onAdd: (rule: ScanRule, done: () => void) => void; pending: boolean }) {
  const [v, set, clear] = useFormDraft('scan-rule.new', NEW_RULE);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const rule: ScanRule = { id: v.id.trim(), name: v.name.trim(), pattern: v.pattern, action: v.action, severity: v.severity };
    if (v.flags.trim()) rule.flags = v.flags.trim();
    onAdd(rule, clear);
  };
  return (
    <form className="stack" onSubmit={submit} aria-label="Add a scan rule">
      <div className="fields">
        <Field label="Rule id" hint="lowercase letters, digits, _ . - (an existing id replaces that rule)">
          {(id, hintId) => <input id={id} aria-describedby={hintId} value={v.id} required pattern="[a-z0-9][a-z0-9_.\-]{0,63}" onChange={(e) => set({ id: e.target.value })} />}
        </Field>
        <Field label="Rule name">{(id) => <input id={id} value={v.name} required maxLength={100} onChange={(e) => set({ name: e.target.value })} />}</Field>
        <Field label="Pattern" hint="a JavaScript regular expression">
          {(id, hintId) => <input id={id} aria-describedby={hintId} value={v.pattern} required maxLength={1000} onChange={(e) => set({ pattern: e.target.value })} />}
        </Field>
        <Field label="Flags" hint="any of i m s u v">
          {(id, hintId) => <input id={id} aria-describedby={hintId} value={v.flags} maxLength={5} onChange={(e) => set({ flags: e.target.value })} />}
        </Field>
        <Field label="On match">{(id) => <EnumSelect id={id} options={SCAN_ACTIONS} value={v.action} onChange={(action) => set({ action })} />}</Field>
        <Field label="Severity">{(id) => <EnumSelect id={id} options={SCAN_SEVERITIES} value={v.severity} onChange={(severity) => set({ severity })} />}</Field>
      </div>
      <div className="row">
        <button type="submit" disabled={pending}>
          Add rule
        </button>
      </div>
    </form>
  );
}

/** The scan rules section (`GET /scan-rules`, `POST /scan-rules`). */
export function ScanRules() {
  const { client } = useOwner();
  const ruleSet = useQuery({ queryKey: ['settings', 'scan-rules'], queryFn: () => client.getScanRules() });
  const save = useRootMutation('settings', (rules: ScanRule[]) => client.updateScanRules({ rules }));
  const [adding, setAdding] = useState(false);
  const rules = ruleSet.data?.rules ?? [];
  return (
    <Section title="Scan rules">
      <p className="muted">Agents and apps check outgoing text against these patterns on the device, before encryption: a block rule stops the send, a warn rule reports it.</p>
      <ErrorNote error={ruleSet.error ?? save.error} />
      {ruleSet.isPending && <Loading />}
      {ruleSet.data && !ruleSet.data.enabled && <p className="notice">Scanning is turned off in the tenant settings above; turn it on to see and edit the rules.</p>}
      {ruleSet.data?.enabled && (
        <>
          <p>
            Version {ruleSet.data.version}
            {ruleSet.data.version === 0 ? ' (built-in)' : ''}, updated <Time iso={ruleSet.data.updated_at} />
          </p>
          {rules.length === 0 ? (
            <Empty>No rules.</Empty>
          ) : (
            <table>
              <Head columns={['Rule', 'Pattern', 'On match', 'Severity', 'Actions']} />
              <tbody>
                {rules.map((r) => (
                  <tr key={r.id}>
                    <td>
                      <strong>{r.name}</strong>
                      <div className="muted">{r.id}</div>
                    </td>
                    <td>
                      <code>
                        /{r.pattern}/{r.flags ?? ''}
                      </code>
                    </td>
                    <td>
                      <Badge tone={r.action === 'block' ? 'bad' : 'warn'}>{r.action}</Badge>
                    </td>
                    <td>{r.severity}</td>
                    <td>
                      <ConfirmButton label="Remove" confirmLabel={`Yes, remove ${r.name}`} onConfirm={() => save.mutate(rules.filter((x) => x.id !== r.id))} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          <button type="button" aria-expanded={adding} onClick={() => setAdding(!adding)}>
            {adding ? 'Close' : 'Add a rule'}
          </button>
          {adding && <AddRule pending={save.isPending} onAdd={(rule, done) => save.mutate([...rules.filter((x) => x.id !== rule.id), rule], { onSuccess: () => { done(); setAdding(false); } })} />}
        </>
      )}
    </Section>
  );
}

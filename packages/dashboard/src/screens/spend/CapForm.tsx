/**
 * An agent's spend caps: unit (tokens, or cents typed as dollars) and the daily
 * and monthly limits (empty = no cap); Save replaces both (`PUT /agents/{hub_id}/spend-cap`).
 */
import { SPEND_UNITS, type SpendCap, type SpendUnit } from '@parley/sdk';
import { useState, type FormEvent } from 'react';
import { useOwner } from '../../app/owner-context';
import { ErrorNote } from '../../components/ui';
import { useRootMutation } from '../../lib/mutate';
import { limitText, parseLimit } from '../../lib/spend-view';
import { EnumSelect, Field } from '../form-parts';

/** The cap form of one agent, prefilled with `current`. */
export function CapForm({ agentId, current }: { agentId: string; current: SpendCap }) {
  const { client } = useOwner();
  const [unit, setUnit] = useState<SpendUnit>(current.unit);
  const [daily, setDaily] = useState(limitText(current.daily_limit, current.unit));
  const [monthly, setMonthly] = useState(limitText(current.monthly_limit, current.unit));
  const [note, setNote] = useState<string>();
  const save = useRootMutation('spend', (body: Parameters<typeof client.setAgentSpendCap>[1]) => client.setAgentSpendCap(agentId, body));
  const hint = unit === 'tokens' ? 'tokens (input + output); empty: no cap' : 'dollars, priced by the model price table; empty: no cap';
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const d = parseLimit(daily, unit);
    const m = parseLimit(monthly, unit);
    if ('error' in d) return setNote(`Daily cap: ${d.error}`);
    if ('error' in m) return setNote(`Monthly cap: ${m.error}`);
    setNote(undefined);
    save.mutate({ unit, daily_limit: d.value, monthly_limit: m.value }, { onSuccess: () => setNote(d.value === null && m.value === null ? 'Caps removed.' : 'Caps saved.') });
  };
  return (
    <form className="stack" onSubmit={submit} aria-label="Spend caps">
      <div className="fields">
        <Field label="Unit" hint="tokens or cents (the budget is in the same unit)">
          {(id) => <EnumSelect id={id} options={SPEND_UNITS} value={unit} onChange={setUnit} />}
        </Field>
        <Field label="Daily cap (UTC day)" hint={hint}>
          {(id, hintId) => <input id={id} aria-describedby={hintId} inputMode="decimal" value={daily} onChange={(e) => setDaily(e.target.value)} />}
        </Field>
        <Field label="Monthly cap (UTC month)" hint={hint}>
          {(id, hintId) => <input id={id} aria-describedby={hintId} inputMode="decimal" value={monthly} onChange={(e) => setMonthly(e.target.value)} />}
        </Field>
      </div>
      {note && <p role="status">{note}</p>}
      <ErrorNote error={save.error} />
      <div className="row">
        <button type="submit" className="primary" disabled={save.isPending}>
          Save caps
        </button>
      </div>
    </form>
  );
}

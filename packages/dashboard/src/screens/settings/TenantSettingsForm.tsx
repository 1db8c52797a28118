/**
 * Tenant settings (contract §4.14; design §8.22): held-message expiry, the default room security
 * level, whether client-side scan rules are served, whether devices send read receipts and whether
 * they require post-quantum end-to-end sessions (`require_post_quantum`); saves
 * only the changed keys, or resets every key to its default (confirmed).
 */
import { HELD_TTL_HOURS, ROOM_SECURITY_LEVELS, type TenantSettings } from '@parley/sdk';
import { useQuery } from '@tanstack/react-query';
import { useMemo, useState, type FormEvent } from 'react';
import { useOwner } from '../../app/owner-context';
import { ConfirmButton, ErrorNote, Loading, Section } from '../../components/ui';
import { useFormDraft } from '../../lib/json-draft';
import { useRootMutation } from '../../lib/mutate';
import { RESET_SETTINGS, settingsPatch, settingsToForm } from '../../lib/settings-form';
import { EnumSelect, Field } from '../form-parts';

function Form({ current }: { current: TenantSettings }) {
  const { client } = useOwner();
  const initial = useMemo(() => settingsToForm(current), [current]);
  const [v, set, clear] = useFormDraft('settings', initial);
  const [note, setNote] = useState<string>();
  const save = useRootMutation('settings', (body: Parameters<typeof client.updateSettings>[0]) => client.updateSettings(body));
  const saved = (text: string) => {
    clear();
    setNote(text);
  };
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const r = settingsPatch(current, v);
    if (!r.ok) return setNote(r.error);
    if (!r.body) return setNote('Nothing changed.');
    setNote(undefined);
    save.mutate(r.body, { onSuccess: () => saved('Saved.') });
  };
  return (
    <form className="stack" onSubmit={submit} aria-label="Tenant settings">
      <div className="fields">
        <Field label="Held messages expire after (hours)" hint={`${HELD_TTL_HOURS.min} to ${HELD_TTL_HOURS.max}`}>
          {(id, hintId) => (
            <input id={id} aria-describedby={hintId} type="number" min={HELD_TTL_HOURS.min} max={HELD_TTL_HOURS.max} step={1} required value={v.heldTtlHours} onChange={(e) => set({ heldTtlHours: e.target.value })} />
          )}
        </Field>
        <Field label="Default room security level" hint="strict rooms hold agent messages for approval">
          {(id) => <EnumSelect id={id} options={ROOM_SECURITY_LEVELS} value={v.defaultRoomSecurityLevel} onChange={(defaultRoomSecurityLevel) => set({ defaultRoomSecurityLevel })} />}
        </Field>
        <div className="field">
          <label className="check">
            <input type="checkbox" checked={v.scanRulesEnabled} onChange={(e) => set({ scanRulesEnabled: e.target.checked })} />
            Serve client-side scan rules
          </label>
        </div>
        <div className="field">
          <label className="check">
            <input type="checkbox" checked={v.readReceipts} onChange={(e) => set({ readReceipts: e.target.checked })} />
            Devices send read receipts (off: senders never see “Read”)
          </label>
        </div>
        <div className="field">
          <label className="check">
            <input type="checkbox" checked={v.requirePostQuantum} onChange={(e) => set({ requirePostQuantum: e.target.checked })} />
            Require post-quantum sessions (devices refuse classical X3DH and non-hybrid MLS; peers without post-quantum keys cannot be reached)
          </label>
        </div>
      </div>
      {note && <p role="status">{note}</p>}
      <ErrorNote error={save.error} />
      <div className="row">
        <button type="submit" className="primary" disabled={save.isPending}>
          Save settings
        </button>
        <ConfirmButton label="Reset to defaults" onConfirm={() => save.mutate(RESET_SETTINGS, { onSuccess: () => saved('Reset to defaults.') })} />
      </div>
    </form>
  );
}

/** The tenant settings section (contract §4.14; design §8.22). */
export function TenantSettingsSection() {
  const { client } = useOwner();
  const settings = useQuery({ queryKey: ['settings'], queryFn: () => client.getSettings() });
  return (
    <Section title="Tenant settings">
      <ErrorNote error={settings.error} />
      {settings.isPending && <Loading />}
      {settings.data && <Form current={settings.data} />}
    </Section>
  );
}

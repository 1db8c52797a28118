/**
 * Agent pickers (design §8.18) shared by the Trust, Shadow and Telemetry screens: a native
 * `<select>` of the owner's agents (usable by keyboard), bare for a form field that brings its
 * own label, or with its `<label>`.
 */
import { useId } from 'react';
import type { AgentEntry } from '../../lib/agents';

interface PickerProps {
  agents: readonly AgentEntry[];
  value: string;
  onChange: (id: string) => void;
  /** The empty first option. */
  placeholder?: string;
  required?: boolean;
}

/** The `<select>` alone; `id` ties it to a label elsewhere. */
export function AgentPicker({ id, agents, value, onChange, placeholder = 'Choose an agent', required }: PickerProps & { id: string }) {
  return (
    <select id={id} value={value} required={required} onChange={(e) => onChange(e.target.value)}>
      <option value="">{placeholder}</option>
      {agents.map((a) => (
        <option key={a.id} value={a.id}>
          {a.hubAddress ? `${a.name} (${a.hubAddress})` : a.name}
          {a.status === 'REVOKED' ? ' — revoked' : ''}
        </option>
      ))}
    </select>
  );
}

/** The `<select>` with its `<label>` on one row. */
export function AgentSelect({ label = 'Agent', ...props }: PickerProps & { label?: string }) {
  const id = useId();
  return (
    <span className="row">
      <label htmlFor={id}>{label}</label>
      <AgentPicker id={id} {...props} />
    </span>
  );
}

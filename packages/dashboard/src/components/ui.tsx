/**
 * The app's small UI kit: error notes with the service's `{detail}`, buttons
 * that confirm, status badges, tables, time formatting. Plain HTML elements with labels and
 * focus styles, so every screen works by keyboard and passes axe-core.
 */
import { ParleyApiError, ParleyNetworkError } from '@parley/sdk';
import { useEffect, useId, useRef, useState, type ReactNode } from 'react';

/** The text to show for a failure: the service's `{detail}` with its status, else the message. */
export function describeError(err: unknown): string {
  if (err instanceof ParleyApiError) return `${err.detail} (${err.status})`;
  if (err instanceof ParleyNetworkError) return `The service cannot be reached: ${err.message}`;
  if (err instanceof Error) return err.message;
  return String(err);
}

/** An error shown in place (role=alert), or nothing. */
export function ErrorNote({ error }: { error: unknown }) {
  if (error === undefined || error === null) return null;
  return (
    <p className="error" role="alert">
      {describeError(error)}
    </p>
  );
}

/** A page section with a heading. */
export function Section({ title, children, actions }: { title: string; children: ReactNode; actions?: ReactNode }) {
  const id = useId();
  return (
    <section aria-labelledby={id} className="card">
      <div className="card-head">
        <h2 id={id}>{title}</h2>
        {actions}
      </div>
      {children}
    </section>
  );
}

/** Loading / empty placeholders. */
export function Loading({ what = 'Loading' }: { what?: string }) {
  return <p className="muted" aria-live="polite">{what}…</p>;
}
export function Empty({ children }: { children: ReactNode }) {
  return <p className="muted">{children}</p>;
}

/** A coloured badge: `tone` picks the colour (good, warn, bad, info, neutral). */
export function Badge({ tone = 'neutral', children, label }: { tone?: 'good' | 'warn' | 'bad' | 'info' | 'neutral'; children: ReactNode; label?: string }) {
  return (
    <span className={`badge badge-${tone}`} {...(label ? { 'aria-label': label } : {})}>
      {children}
    </span>
  );
}

/** Device health (design §8.2) as a badge. */
export function Health({ health }: { health: string }) {
  const tone = health === 'green' ? 'good' : health === 'yellow' ? 'warn' : 'bad';
  return <Badge tone={tone} label={`health ${health}`}>● {health}</Badge>;
}

/**
 * A button that asks "Are you sure?" inline before running `onConfirm` (revoke, delete): the
 * first press shows Confirm / Cancel, focused on Cancel.
 */
export function ConfirmButton({ label, confirmLabel, onConfirm, disabled, danger = true }: { label: string; confirmLabel?: string; onConfirm: () => void; disabled?: boolean; danger?: boolean }) {
  const [asking, setAsking] = useState(false);
  const cancelRef = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (asking) cancelRef.current?.focus();
  }, [asking]);
  if (!asking) {
    return (
      <button type="button" className={danger ? 'danger' : ''} disabled={disabled} onClick={() => setAsking(true)}>
        {label}
      </button>
    );
  }
  return (
    <span className="confirm" role="group" aria-label={`Confirm: ${label}`}>
      <button
        type="button"
        className="danger"
        onClick={() => {
          setAsking(false);
          onConfirm();
        }}
      >
        {confirmLabel ?? `Yes, ${label.toLowerCase()}`}
      </button>
      <button type="button" ref={cancelRef} onClick={() => setAsking(false)}>
        Cancel
      </button>
    </span>
  );
}

/** "3 min ago" style relative time (en), or "never". */
export function ago(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return 'never';
  const s = Math.round((now - Date.parse(iso)) / 1000);
  if (!Number.isFinite(s)) return 'unknown';
  if (s < 5) return 'just now';
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  return `${Math.floor(s / 86400)} d ago`;
}

/** A date-time as the owner's locale shows it, with the ISO value in a tooltip. */
export function Time({ iso }: { iso: string | null | undefined }) {
  if (!iso) return <span className="muted">—</span>;
  return (
    <time dateTime={iso} title={iso}>
      {new Date(iso).toLocaleString()}
    </time>
  );
}

/** Copy text to the clipboard with a visible confirmation. */
export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [done, setDone] = useState(false);
  return (
    <button
      type="button"
      onClick={() => {
        void navigator.clipboard?.writeText(text).then(() => setDone(true), () => setDone(false));
      }}
    >
      {done ? 'Copied' : label}
    </button>
  );
}

/** A table's column headers (`<thead>` with `scope="col"` cells, as screen readers need). */
export function Head({ columns }: { columns: string[] }) {
  return (
    <thead>
      <tr>
        {columns.map((c) => (
          <th key={c} scope="col">
            {c}
          </th>
        ))}
      </tr>
    </thead>
  );
}

/**
 * A horizontal bar (styles.css `.bar`) with an optional marker, for trust dimensions next to the
 * fleet median (design §8.14) and shadow graduation gates (contract §3.4). The bar is decoration:
 * the value is always written next to it, so nothing is told by colour or length alone.
 */

/** A 0..100 bar; `marker` (0..100) draws a line, e.g. at the fleet median. */
export function Meter({ percent, marker, tone }: { percent: number; marker?: number | null; tone?: 'good' | 'warn' | 'bad' }) {
  const p = Math.min(100, Math.max(0, percent));
  const colour = tone ? `var(--${tone})` : undefined;
  return (
    <div className="bar" aria-hidden="true">
      <span style={{ width: `${p}%`, ...(colour ? { background: colour } : {}) }} />
      {marker !== undefined && marker !== null && <i style={{ left: `calc(${Math.min(100, Math.max(0, marker))}% - 1px)` }} />}
    </div>
  );
}

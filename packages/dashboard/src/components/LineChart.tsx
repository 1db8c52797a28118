/**
 * A line chart of one series over time (uPlot), used for trust-score history (design §8.14).
 * The plot is created in an effect, resized with its container, fed new data with `setData`, and
 * destroyed on unmount. The canvas is not readable by assistive technology, so the figure carries
 * a caption and the same values as a table under "Show values".
 */
import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface LineChartProps {
  /** The figure caption (also the chart's accessible name). */
  title: string;
  /** Unix seconds, ascending. */
  x: number[];
  y: number[];
  /** Series name shown in the legend. */
  label: string;
  /** Fixed x range in Unix seconds (e.g. the last 30 days), else the data's extent. */
  xRange?: [number, number];
  /** Fixed y range, e.g. [0, 1] for scores. */
  yRange?: [number, number];
  /** How a y value is written in the legend and the table. */
  format?: (v: number) => string;
  height?: number;
}

const STROKE = '#0b57d0'; // styles.css --accent

/** uPlot line chart in a `<figure>` with a caption and a values table (design §8.14). */
export function LineChart({ title, x, y, label, xRange, yRange, format = (v) => String(v), height = 220 }: LineChartProps) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const fmt = useRef(format);
  fmt.current = format;
  const xr = useRef(xRange);
  xr.current = xRange;

  // Create once per shape (label, range, height); destroy on unmount or when the shape changes.
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const opts: uPlot.Options = {
      width: Math.max(200, el.clientWidth),
      height,
      series: [{}, { label, stroke: STROKE, width: 2, points: { show: true }, value: (_u, v) => (v === null ? '—' : fmt.current(v)) }],
      scales: { x: { time: true, range: (_u, min, max) => xr.current ?? [min, max] }, ...(yRange ? { y: { range: yRange } } : {}) },
      axes: [{}, { values: (_u, ticks) => ticks.map((t) => fmt.current(t)) }],
    };
    const u = new uPlot(opts, [[], []], el);
    plot.current = u;
    const ro = typeof ResizeObserver === 'undefined' ? undefined : new ResizeObserver(() => u.setSize({ width: Math.max(200, el.clientWidth), height }));
    ro?.observe(el);
    return () => {
      ro?.disconnect();
      u.destroy();
      plot.current = null;
    };
  }, [label, height, yRange?.[0], yRange?.[1]]);

  useEffect(() => {
    plot.current?.setData([x, y]);
  }, [x, y, label, height, xRange?.[0], xRange?.[1], yRange?.[0], yRange?.[1]]);

  return (
    <figure style={{ margin: 0 }}>
      <figcaption className="muted">{title}</figcaption>
      <div ref={box} role="img" aria-label={`${title}: line chart of ${x.length} points; the values are listed below`} />
      <details>
        <summary>Show values</summary>
        <table>
          <caption className="muted">{title}</caption>
          <thead>
            <tr>
              <th scope="col">Time</th>
              <th scope="col">{label}</th>
            </tr>
          </thead>
          <tbody>
            {x.map((t, i) => (
              <tr key={i}>
                <td>
                  <time dateTime={new Date(t * 1000).toISOString()}>{new Date(t * 1000).toLocaleString()}</time>
                </td>
                <td>{fmt.current(y[i]!)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </figure>
  );
}

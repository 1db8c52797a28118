/** Timing helpers for bench/crypto: closed-loop op counting and medians. */
import { performance } from 'node:perf_hooks';

/** One unit of work: one message encrypted by its sender and decrypted by every receiver. */
export type Step = () => void | Promise<void>;

export interface Sample {
  ops: number;
  ms: number;
}

/** Runs `step` back to back for at least `durationMs`; awaits only steps that return a promise. */
export async function measure(step: Step, durationMs: number): Promise<Sample> {
  const start = performance.now();
  const end = start + durationMs;
  let ops = 0;
  let now = start;
  while (now < end) {
    // Read the clock every 16 sync steps (the baseline is a few µs per op), after every async one.
    for (let i = 0; i < 16; i++) {
      const r = step();
      ops++;
      if (r !== undefined) {
        await r;
        break;
      }
    }
    now = performance.now();
  }
  return { ops, ms: now - start };
}

export const rate = (s: Sample): number => (s.ops * 1000) / s.ms;

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** Byte equality through Buffer (memcmp), the same check for every scenario. */
export function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength));
}

/** Left/right-padded fixed-width table. */
export function table(header: string[], rows: string[][], rightAligned: boolean[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const fmt = (cells: string[]) => cells.map((c, i) => (rightAligned[i] ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  ');
  return [fmt(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(fmt)].join('\n');
}

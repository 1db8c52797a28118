/** Waiting in tests for something another process or timer brings about, without fixed sleeps. */

/** Resolve after `ms` milliseconds. */
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Call `probe` every `everyMs` until it answers something other than undefined, and answer that;
 * reject naming `what` after `timeoutMs`.
 */
export async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 15_000, everyMs = 25): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}

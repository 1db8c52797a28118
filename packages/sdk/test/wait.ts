/** Waiting in the SDK's tests: a sleep, and polling until something holds. */

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** What {@link waitFor} polls: a value, or `undefined` / `false` while there is none yet (may be async). */
export type Poll<T> = () => T | undefined | false | Promise<T | undefined | false>;

/**
 * Call `get` every `everyMs` until it answers something other than `undefined` or `false`, and
 * answer that (a predicate's `true`); throws `timed out waiting for <what>` after `timeoutMs`.
 */
export async function waitFor<T>(get: Poll<T>, what: string, timeoutMs = 8000, everyMs = 10): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await get();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}

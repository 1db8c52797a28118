/**
 * `npm run cli -- wait-for --file F --line TEXT [--timeout S]`: wait until file `F` has a line
 * starting with `TEXT` (e.g. the `ready` line of a background `listen` whose output is teed to
 * `F`), so that a script pasted as one block goes on only once an earlier step's effect is there.
 * Polls every 100 ms; a missing file counts as empty.
 */
import fs from 'node:fs';

/** Default and longest wait, in seconds. */
export const WAIT_FOR_DEFAULT_S = 30;

/**
 * Resolves with 0 once `file` has a line starting with `prefix`, 1 after `timeoutS` seconds
 * (with a line on stderr naming what was awaited).
 */
export async function waitForLine(file: string, prefix: string, timeoutS = WAIT_FOR_DEFAULT_S, err: (line: string) => void = (l) => console.error(l)): Promise<number> {
  const end = Date.now() + timeoutS * 1000;
  for (;;) {
    let text = '';
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch {
      /* not written yet */
    }
    if (text.split('\n').some((line) => line.startsWith(prefix))) return 0;
    if (Date.now() >= end) {
      err(`error: no line starting with "${prefix}" in ${file} after ${timeoutS} s (is the process writing it still running? see its output above)`);
      return 1;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

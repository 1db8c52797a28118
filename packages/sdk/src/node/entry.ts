/**
 * Command entry points (`parley-agent`, and `parley-mcp` / `parley-bridge` of `@parley/mcp`): run
 * a command's `main` only when its file is the script node was started with (not when a test
 * imports it), then exit with its status once stdout drained (a keep-alive connection must not
 * keep the process alive); an unexpected rejection prints its stack and exits 1.
 */
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Whether the module at `moduleUrl` (its `import.meta.url`) is the script node runs. */
export function invokedDirectly(moduleUrl: string): boolean {
  const script = process.argv[1];
  if (!script) return false;
  try {
    return realpathSync(script) === realpathSync(fileURLToPath(moduleUrl));
  } catch {
    return false;
  }
}

/**
 * When `moduleUrl` is the started script: run `main(argv)` and exit with the status it answers.
 * @param name the command's name, prefixing the line of an unexpected failure
 */
export function runIfMain(moduleUrl: string, name: string, main: (argv: string[]) => Promise<number>): void {
  if (invokedDirectly(moduleUrl)) runCommand(name, main);
}

/**
 * Run `main(argv)` with the process's arguments and exit with the status it answers (what
 * {@link runIfMain} does for the started script; the `bin/` launchers of the packages call it).
 * @param name the command's name, prefixing the line of an unexpected failure
 */
export function runCommand(name: string, main: (argv: string[]) => Promise<number>): void {
  main(process.argv.slice(2)).then(
    (code) => process.stdout.write('', () => process.exit(code)),
    (err: unknown) => {
      console.error(`${name}: ${(err as Error)?.stack ?? String(err)}`);
      process.exit(1);
    },
  );
}

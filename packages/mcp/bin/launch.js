/**
 * The launchers of `parley-mcp` and `parley-bridge` (`bin/` of @parley/mcp): small files that exist
 * in a fresh checkout, so `npm ci` links the commands into `node_modules/.bin` (npm skips a bin
 * whose file is missing at install time, and `dist/` is only built afterwards). Each one imports
 * the built command from `dist/` and runs its `main`; before `npm run build` it says so.
 */
import console from 'node:console';
import process from 'node:process';
import { URL } from 'node:url';

/**
 * Run the `main(argv)` export of the built module `file` (relative to this directory) as command
 * `name`, exiting with the status it answers.
 * @param {string} name the command's name, for messages
 * @param {string} file e.g. `../dist/cli.js`
 * @returns {Promise<void>}
 */
export async function launch(name, file) {
  let command;
  let entry;
  try {
    command = await import(new URL(file, import.meta.url).href);
    entry = await import('@parley/sdk/node');
  } catch (err) {
    if (err?.code !== 'ERR_MODULE_NOT_FOUND') throw err;
    console.error(`${name}: not built yet (${err.message}); run \`npm run build\` at the repository root first`);
    process.exit(1);
  }
  entry.runCommand(name, command.main);
}

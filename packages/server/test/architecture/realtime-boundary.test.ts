/**
 * Layering of src/realtime (docs/architecture.md): the gateway, bus and notifier know no module.
 * Modules plug into realtime (Gateway.registerFrame, onDeliver, SocketAuthenticator,
 * PresenceHooks) and may import it; no file under src/realtime imports anything under src/modules.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { sourceFiles, specifiers, SRC as src } from './import-graph.js';

const realtime = path.join(src, 'realtime');
const modules = path.join(src, 'modules');

/** `file: specifier` of every import of a realtime file that resolves into src/modules. */
function upwardImports(files: string[]): string[] {
  return files.flatMap((file) =>
    specifiers(fs.readFileSync(file, 'utf8'))
      .filter((s) => s.startsWith('.') && path.resolve(path.dirname(file), s).startsWith(modules + path.sep))
      .map((s) => `${path.relative(src, file)}: ${s}`),
  );
}

describe('realtime boundary', () => {
  it('finds the imports it must refuse', () => {
    const code = [
      "import type { MessageService } from '../modules/conversations/messages.js';",
      "import { getDevice } from '../modules/devices/repo.js';",
      "export { x } from '../modules/a/b.js';",
      "import '../modules/side-effect.js';",
      "const m = await import('../modules/lazy.js');",
      "import { CLOSE } from './notifier.js';",
    ].join('\n');
    const hits = specifiers(code).filter((s) => path.resolve(realtime, s).startsWith(modules + path.sep));
    expect(hits).toEqual(['../modules/conversations/messages.js', '../modules/devices/repo.js', '../modules/a/b.js', '../modules/side-effect.js', '../modules/lazy.js']);
  });

  it('no file under src/realtime imports from src/modules', () => {
    const files = sourceFiles(realtime);
    expect(files.map((f) => path.basename(f))).toContain('gateway.ts');
    expect(upwardImports(files)).toEqual([]);
  });
});

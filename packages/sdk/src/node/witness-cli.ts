#!/usr/bin/env node
/**
 * A transparency-log witness (C2SP tlog-witness) for Parley's checkpoints (design §8.33). From
 * the repository: `npm run witness -- --name NAME --data-dir DIR --log 'ORIGIN VKEY' …`; it
 * prints its verifier key (C2SP tlog-cosignature, type 0x04) and its URL, then serves
 * `POST <url>/add-checkpoint` until SIGINT / SIGTERM.
 */
import { parseArgs } from 'node:util';
import { runIfMain } from './entry.js';
import { DEFAULT_WITNESS_PORT, startWitness, type RunningWitness, type WitnessedLog } from './witness/server.js';

export const USAGE = `usage:
  npm run witness -- --name NAME --data-dir DIR --log 'ORIGIN VKEY' [--log 'ORIGIN VKEY' …]
                     [--port ${DEFAULT_WITNESS_PORT}] [--host 127.0.0.1]

  --name      the witness's key name, e.g. witness.example/w1 (env WITNESS_NAME)
  --data-dir  directory of its key (witness-key) and state (state.json) (env WITNESS_DATA_DIR)
  --log       a log it cosigns: its origin and the log's verifier key, separated by a space;
              repeat for several logs, or several keys of one log
              (env WITNESS_LOGS: one 'ORIGIN VKEY' a line)
  --port      default ${DEFAULT_WITNESS_PORT} (env PORT)
  --host      default 127.0.0.1

exit status: 0 stopped by a signal, 2 usage error or failure to start`;

/** Where the command writes, and how it waits for the stop signal (replaceable in tests). */
export interface WitnessCliIo {
  out: (line: string) => void;
  err: (line: string) => void;
  /** Resolves when the witness should stop (default: SIGINT or SIGTERM). */
  stopped: () => Promise<void>;
}

const defaultIo: WitnessCliIo = {
  out: (l) => console.log(l),
  err: (l) => console.error(l),
  stopped: () => new Promise((resolve) => ['SIGINT', 'SIGTERM'].forEach((s) => process.once(s, () => resolve()))),
};

class UsageError extends Error {}

/** A `--log` value: `<origin> <vkey>` (the origin has no spaces in Parley's logs: `<host>/keys`). */
export function parseLogSpec(spec: string): WitnessedLog {
  const m = /^\s*(\S+)\s+(\S+)\s*$/.exec(spec);
  if (!m) throw new UsageError(`--log takes 'ORIGIN VKEY', not ${JSON.stringify(spec)}`);
  return { origin: m[1]!, vkey: m[2]! };
}

/** Run the witness with `argv` (without node and script) until stopped; returns the exit status. */
export async function main(argv: string[], io: WitnessCliIo = defaultIo, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  let witness: RunningWitness;
  try {
    const { values, positionals } = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { name: { type: 'string' }, 'data-dir': { type: 'string' }, log: { type: 'string', multiple: true }, port: { type: 'string' }, host: { type: 'string' } },
    });
    const name = values.name ?? env.WITNESS_NAME;
    const dataDir = values['data-dir'] ?? env.WITNESS_DATA_DIR;
    const specs = values.log ?? (env.WITNESS_LOGS ?? '').split('\n').filter((l) => l.trim() !== '');
    const portText = values.port ?? env.PORT ?? String(DEFAULT_WITNESS_PORT);
    if (positionals.length > 0 || !name || !dataDir || specs.length === 0) throw new UsageError(USAGE);
    if (!/^\d{1,5}$/.test(portText) || Number(portText) > 65535) throw new UsageError(`bad port ${portText}`);
    witness = await startWitness({ name, dataDir, logs: specs.map(parseLogSpec), port: Number(portText), host: values.host ?? '127.0.0.1', log: io.err });
  } catch (err) {
    io.err(err instanceof UsageError ? err.message : `witness: ${(err as Error).message}`);
    return 2;
  }
  io.out(`witness vkey: ${witness.vkey}`);
  io.out(`witness listening on ${witness.url} (POST ${witness.url}/add-checkpoint)`);
  await io.stopped();
  await witness.close();
  return 0;
}

runIfMain(import.meta.url, 'witness', (argv) => main(argv));

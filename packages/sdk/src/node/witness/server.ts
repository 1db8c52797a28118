/**
 * A transparency-log witness over HTTP (C2SP tlog-witness): `POST <url>/add-checkpoint` and
 * nothing else, on `node:http`. Answers are plain text: 200 with the cosignature line
 * (C2SP tlog-cosignature `cosignature/v1`), or the status of `add-checkpoint.ts` with a one-line
 * reason (409: the latest size, `text/x.tlog.size`); 404 for other paths, 405 for other
 * methods, 413 for bodies above {@link MAX_WITNESS_BODY}.
 *
 * Its data directory holds `witness-key` (the Ed25519 seed, `key.ts`) and `state.json` (the
 * latest cosigned size and root of each log, `state.ts`); one witness process per directory.
 * Requests are handled one at a time, so that checking `old` and recording the new size are one
 * step (C2SP tlog-witness: a concurrent request must not roll a log's size back).
 */
import { mkdir } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { formatWitnessVkey } from '../../audit-log/cosignature.js';
import { parseVkey, type NoteVerifierKey } from '../../audit-log/note.js';
import { addCheckpoint, WitnessError } from './add-checkpoint.js';
import { loadWitnessKey } from './key.js';
import { WitnessState } from './state.js';

/** The largest request body accepted (bytes): a checkpoint, its signatures and 63 proof lines fit well. */
export const MAX_WITNESS_BODY = 64 * 1024;
/** The default port of a witness. */
export const DEFAULT_WITNESS_PORT = 7380;
/** The seed file and the state file of a witness's data directory. */
export const WITNESS_KEY_FILE = 'witness-key';
export const WITNESS_STATE_FILE = 'state.json';

/** A log the witness cosigns: its origin (the checkpoints' first line) and a verifier key of its (type 0x01). */
export interface WitnessedLog {
  origin: string;
  vkey: string;
}

/** Options of {@link startWitness}. */
export interface StartWitnessOptions {
  /** The witness's key name (C2SP tlog-cosignature: a schema-less URL, e.g. `witness.example/w1`). */
  name: string;
  /** Directory of the seed and state files (created, mode 0700, when missing). */
  dataDir: string;
  /** The logs it cosigns; several entries with one origin give that log several trusted keys. */
  logs: readonly WitnessedLog[];
  /** Default {@link DEFAULT_WITNESS_PORT}; 0 for any free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** The current time in POSIX seconds (default: the system clock). */
  now?: () => number;
  /** Where warnings go (default: stderr). */
  log?: (line: string) => void;
}

/** A running witness: its submission prefix URL (POST `${url}/add-checkpoint`), its vkey, and how to stop it. */
export interface RunningWitness {
  url: string;
  vkey: string;
  close(): Promise<void>;
}

class TooLarge extends Error {}

async function readBody(req: IncomingMessage): Promise<string> {
  // A declared length is checked before reading (the client then reads the 413 answer).
  if (Number(req.headers['content-length'] ?? 0) > MAX_WITNESS_BODY) throw new TooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_WITNESS_BODY) throw new TooLarge();
    chunks.push(chunk as Buffer);
  }
  return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(chunks));
}

function send(res: ServerResponse, status: number, body: string, contentType = 'text/plain; charset=utf-8', headers: Record<string, string> = {}): void {
  if (res.headersSent) return;
  res.writeHead(status, { ...headers, 'content-type': contentType, 'content-length': Buffer.byteLength(body), 'cache-control': 'no-store' });
  res.end(body);
}

/**
 * Start a witness: load (or create) its key and state in `dataDir`, listen on `host:port`.
 * @throws Error for a bad name or log vkey, an unreadable key or state file, or a port in use
 */
export async function startWitness(options: StartWitnessOptions): Promise<RunningWitness> {
  const warn = options.log ?? ((line: string) => console.error(line));
  const logs = new Map<string, NoteVerifierKey[]>();
  for (const { origin, vkey } of options.logs) {
    if (!origin || /[\n]/.test(origin)) throw new Error(`bad log origin ${JSON.stringify(origin)}`);
    logs.set(origin, [...(logs.get(origin) ?? []), parseVkey(vkey)]);
  }
  await mkdir(options.dataDir, { recursive: true, mode: 0o700 });
  const key = await loadWitnessKey(path.join(options.dataDir, WITNESS_KEY_FILE), warn);
  const vkey = formatWitnessVkey(options.name, key.publicKey);
  const state = await WitnessState.open(path.join(options.dataDir, WITNESS_STATE_FILE));
  const ctx = { name: options.name, key, logs, state, now: options.now ?? (() => Math.floor(Date.now() / 1000)) };

  // One request at a time: each waits for the previous one to finish (success or not).
  let queue: Promise<unknown> = Promise.resolve();
  const serialized = <T>(fn: () => Promise<T>): Promise<T> => {
    const run = queue.then(fn, fn);
    queue = run.catch(() => undefined);
    return run;
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const pathname = new URL(req.url ?? '/', 'http://witness').pathname;
    if (pathname !== '/add-checkpoint') return send(res, 404, 'not found\n');
    if (req.method !== 'POST') return send(res, 405, 'method not allowed: POST only\n', undefined, { allow: 'POST' });
    let body: string;
    try {
      body = await readBody(req);
    } catch (err) {
      if (err instanceof TooLarge) return send(res, 413, `body larger than ${MAX_WITNESS_BODY} bytes\n`, undefined, { connection: 'close' });
      return send(res, 400, 'the body is not UTF-8 text\n');
    }
    try {
      send(res, 200, await serialized(() => addCheckpoint(ctx, body)));
    } catch (err) {
      if (!(err instanceof WitnessError)) throw err;
      send(res, err.status, err.contentType ? err.message : `${err.message}\n`, err.contentType);
    }
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      warn(`witness: ${(err as Error)?.stack ?? String(err)}`);
      send(res, 500, 'internal error\n');
    });
  });
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? DEFAULT_WITNESS_PORT, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  let closed: Promise<void> | undefined;
  return {
    url,
    vkey,
    close() {
      closed ??= (async () => {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
        await queue;
      })();
      return closed;
    },
  };
}

#!/usr/bin/env node
/**
 * The audit log's offline verifier (design §8.33): checks the service's saved answers with nothing
 * but the platform's audit-log key. From the repository: `npm run -s audit-log -- <command> …`; from an
 * installed SDK: `node node_modules/@parley/sdk/dist/node/audit-cli.js <command> …`.
 *
 *   verify-inclusion --proof F --vkey V [--tenant ID]
 *       F: the saved answer of GET /api/v1/audit/events/{event_id}/proof. Checks the checkpoint's
 *       signature, the event's chain hash from its contents, and its audit path to the signed root.
 *   verify-consistency --old F --new F --proof F --vkey V [--tenant ID]
 *       --old / --new: saved answers of GET /api/v1/audit/checkpoint (or the bare checkpoint notes);
 *       --proof: the saved answer of GET /api/v1/audit/consistency?first=<old size>&second=<new size>.
 *
 * V is the vkey (`vkey` of GET /api/v1/audit/log-key) or a file holding it; repeat --vkey for
 * several keys (across a key rotation). Prints one JSON line; exit 0 when the proof holds, 1 when
 * it does not, 2 on a usage error or an unreadable file.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { AuditConsistencyProof, AuditEventProof } from '@parley/protocol';
import { bytesToBase64 } from '../crypto/primitives.js';
import { AuditLogError } from '../audit-log/merkle.js';
import { verifyCheckpointConsistency, verifyEventProof, type VerifiedCheckpoint } from '../audit-log/verify.js';
import { runIfMain } from './entry.js';

export const USAGE = `usage:
  npm run -s audit-log -- verify-inclusion --proof FILE --vkey VKEY [--tenant TENANT_ID]
  npm run -s audit-log -- verify-consistency --old FILE --new FILE --proof FILE --vkey VKEY [--tenant TENANT_ID]
  (from an installed SDK: node node_modules/@parley/sdk/dist/node/audit-cli.js verify-inclusion …)

  --proof   verify-inclusion: the saved answer of GET /api/v1/audit/events/{event_id}/proof;
            verify-consistency: the saved answer of GET /api/v1/audit/consistency
  --old     the saved answer of GET /api/v1/audit/checkpoint (or the note) of the older size
  --new     the same of the newer size
  --vkey    the audit-log verifier key (vkey of GET /api/v1/audit/log-key) or a file holding it;
            may be repeated
  --tenant  also require the log to be this tenant's

exit status: 0 the proof holds, 1 it does not, 2 usage or unreadable input`;

/** Where the command writes (replaceable in tests). */
export interface AuditCliIo {
  out: (line: string) => void;
  err: (line: string) => void;
}

const defaultIo: AuditCliIo = { out: (l) => console.log(l), err: (l) => console.error(l) };

class UsageError extends Error {}

function readText(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    throw new UsageError(`cannot read ${file}: ${(err as Error).message}`);
  }
}

function readJson<T>(file: string): T {
  const text = readText(file);
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new UsageError(`${file} is not JSON`);
  }
}

/** A checkpoint note from a saved `GET /audit/checkpoint` answer, or the note itself. */
function readCheckpoint(file: string): string {
  const text = readText(file);
  try {
    const json = JSON.parse(text) as { checkpoint?: unknown };
    if (typeof json?.checkpoint === 'string') return json.checkpoint;
  } catch {
    /* the bare note */
  }
  return text;
}

/** A vkey given as itself (`name+id+key`), or the file that holds it. */
const readVkey = (v: string): string => (/^[^\s+]+\+[0-9a-f]{8}\+\S+$/.test(v.trim()) ? v.trim() : readText(v).trim());

const describe = (c: VerifiedCheckpoint) => ({ origin: c.origin, tenant_id: c.tenantId, tree_size: c.treeSize, root_hash: bytesToBase64(c.rootHash), timestamp: c.timestamp, signed_by: c.signedBy });

/** Run the command on `argv` (without node and script); returns the exit status. Never throws. */
export async function main(argv: string[], io: AuditCliIo = defaultIo): Promise<number> {
  try {
    const { values, positionals } = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { proof: { type: 'string' }, old: { type: 'string' }, new: { type: 'string' }, vkey: { type: 'string', multiple: true }, tenant: { type: 'string' } },
    });
    const [command, ...extra] = positionals;
    if (extra.length > 0 || !values.proof || !values.vkey?.length) throw new UsageError(USAGE);
    const keys = values.vkey.map(readVkey);
    const opts = values.tenant ? { tenantId: values.tenant } : {};
    try {
      if (command === 'verify-inclusion') {
        const r = verifyEventProof(readJson<AuditEventProof>(values.proof), keys, opts);
        io.out(JSON.stringify({ valid: true, event_id: r.eventId, leaf_index: r.leafIndex, event_hash: r.eventHash, checkpoint: describe(r.checkpoint) }));
        return 0;
      }
      if (command === 'verify-consistency') {
        if (!values.old || !values.new) throw new UsageError(USAGE);
        const r = verifyCheckpointConsistency(readCheckpoint(values.old), readCheckpoint(values.new), readJson<AuditConsistencyProof>(values.proof), keys, opts);
        io.out(JSON.stringify({ valid: true, old: describe(r.older), new: describe(r.newer) }));
        return 0;
      }
    } catch (err) {
      if (!(err instanceof AuditLogError) && !(err instanceof TypeError)) throw err;
      // A TypeError is a saved answer of the wrong shape (a field missing): it does not verify either.
      io.out(JSON.stringify({ valid: false, code: err instanceof AuditLogError ? err.code : 'malformed', reason: err.message }));
      return 1;
    }
    throw new UsageError(USAGE);
  } catch (err) {
    io.err(err instanceof UsageError ? err.message : `audit-log: ${(err as Error).message}`);
    return 2;
  }
}

runIfMain(import.meta.url, 'audit-log', (argv) => main(argv));

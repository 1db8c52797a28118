/**
 * The `add-checkpoint` operation of a witness (C2SP tlog-witness): parse the request body, verify
 * the log's signature, check the consistency proof from the latest cosigned checkpoint (RFC 9162
 * §2.1.4.2), record the new checkpoint, and answer the witness's cosignature (C2SP
 * tlog-cosignature, `cosignature/v1`). Each failure carries the HTTP status the spec gives it:
 *
 * - 400: a malformed body or checkpoint, or an old size above the checkpoint's size;
 * - 404: an origin the witness has no key for;
 * - 403: no signature by a key of that origin, or one by such a key that does not verify;
 * - 409 (`Content-Type: text/x.tlog.size`, body `<size>\n`): `old` is not the size of the
 *   latest checkpoint cosigned for the origin (0 when none);
 * - 422: a size-0 checkpoint whose root is not the empty tree's, a proof from size 0 that is not
 *   empty, a proof that does not verify, an equal size with another root.
 */
import { AuditLogError, emptyRoot, verifyConsistency } from '../../audit-log/merkle.js';
import { parseCheckpointText, verifyNote, type CheckpointBody, type NoteVerifierKey } from '../../audit-log/note.js';
import { cosignLine } from '../../audit-log/cosignature.js';
import { base64ToBytes, equalBytes } from '../../crypto/primitives.js';
import type { WitnessKey } from './key.js';
import type { WitnessState } from './state.js';

/** A client MUST NOT send more than 63 consistency proof lines (C2SP tlog-witness). */
export const MAX_PROOF_LINES = 63;
/** The content type of a 409 answer's body: the witness's latest size in decimal and a newline. */
export const TLOG_SIZE_CONTENT_TYPE = 'text/x.tlog.size';

/** A refused request: the HTTP status, a plain-text reason, and (409) the content type of the body. */
export class WitnessError extends Error {
  override readonly name = 'WitnessError';
  constructor(
    readonly status: 400 | 403 | 404 | 409 | 422,
    message: string,
    readonly contentType?: string,
  ) {
    super(message);
  }
}

/** A parsed `add-checkpoint` body: the old size, the consistency proof (32-byte hashes), the checkpoint note. */
export interface AddCheckpointRequest {
  oldSize: number;
  proof: Uint8Array[];
  note: string;
}

const badRequest = (why: string): never => {
  throw new WitnessError(400, why);
};

/**
 * Parse an `add-checkpoint` body: `old <size>\n`, up to 63 base64 hash lines, an empty line, a
 * signed checkpoint note (parsed later, by the signature check).
 * @throws WitnessError 400 when it has another shape
 */
export function parseAddCheckpointBody(body: string): AddCheckpointRequest {
  const split = body.indexOf('\n\n');
  if (split < 0) badRequest('the body is an old size line, proof lines, an empty line and a checkpoint');
  const [old, ...proofLines] = body.slice(0, split).split('\n') as [string, ...string[]];
  const m = /^old (0|[1-9][0-9]{0,15})$/.exec(old);
  if (!m || !Number.isSafeInteger(Number(m[1]))) badRequest('the first line is "old <size>" (decimal, no leading zeros)');
  if (proofLines.length > MAX_PROOF_LINES) badRequest(`at most ${MAX_PROOF_LINES} consistency proof lines`);
  const proof = proofLines.map((line) => {
    let hash: Uint8Array;
    try {
      hash = base64ToBytes(line, 'proof hash');
    } catch {
      return badRequest('a consistency proof line is a base64 hash');
    }
    if (hash.length !== 32) badRequest('a consistency proof hash is 32 bytes');
    return hash;
  });
  return { oldSize: Number(m![1]), proof, note: body.slice(split + 2) };
}

/** What an `add-checkpoint` needs: the witness's name and key, the logs' keys by origin, its state. */
export interface AddCheckpointContext {
  name: string;
  key: WitnessKey;
  /** The trusted verifier keys (C2SP signed-note, type 0x01) of each known origin. */
  logs: ReadonlyMap<string, readonly NoteVerifierKey[]>;
  state: WitnessState;
  /** The current time in POSIX seconds (the cosignature's timestamp; never 0). */
  now: () => number;
}

/**
 * Run one `add-checkpoint` request; resolves to the response body (the cosignature line) once the
 * new checkpoint is recorded on disk. Callers serialize the calls of one witness (the check of the
 * old size and the write of the new one form one step, C2SP tlog-witness).
 * @throws WitnessError with the status of the check that failed (see the module's description)
 */
export async function addCheckpoint(ctx: AddCheckpointContext, body: string): Promise<string> {
  const req = parseAddCheckpointBody(body);
  const origin = req.note.slice(0, Math.max(0, req.note.indexOf('\n')));
  const keys = ctx.logs.get(origin);
  if (!keys) throw new WitnessError(404, `unknown log origin ${JSON.stringify(origin)}`);
  let text: string;
  try {
    text = verifyNote(req.note, keys).text;
  } catch (err) {
    if (err instanceof AuditLogError && err.code === 'bad_signature') throw new WitnessError(403, err.message);
    if (err instanceof AuditLogError) throw new WitnessError(400, `the checkpoint note is malformed: ${err.message}`);
    throw err;
  }
  let checkpoint: CheckpointBody;
  try {
    checkpoint = parseCheckpointText(text);
  } catch (err) {
    throw new WitnessError(400, `the checkpoint is malformed: ${(err as Error).message}`);
  }
  const { treeSize, rootHash } = checkpoint;
  if (req.oldSize > treeSize) badRequest(`old size ${req.oldSize} is above the checkpoint size ${treeSize}`);
  // Checked whatever the recorded size (the consistency check below would only see it from old 0).
  if (treeSize === 0 && !equalBytes(rootHash, emptyRoot())) throw new WitnessError(422, 'a checkpoint of size 0 must have the root of the empty tree');
  const latest = ctx.state.get(origin);
  const latestSize = latest?.size ?? 0;
  if (req.oldSize !== latestSize) throw new WitnessError(409, `${latestSize}\n`, TLOG_SIZE_CONTENT_TYPE);
  try {
    verifyConsistency(req.oldSize, treeSize, latest?.root ?? emptyRoot(), rootHash, req.proof);
  } catch (err) {
    if (err instanceof AuditLogError) throw new WitnessError(422, err.message);
    throw err;
  }
  const time = ctx.now();
  if (!Number.isSafeInteger(time) || time <= 0) throw new Error('the witness clock gives no positive time');
  await ctx.state.put(origin, { size: treeSize, root: rootHash });
  return cosignLine(text, { name: ctx.name, secretKey: ctx.key.secretKey }, time);
}

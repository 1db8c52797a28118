/**
 * Publication of the key directory's checkpoints to the witnesses the platform runs with
 * (design §8.39; `KEY_DIRECTORY_WITNESSES`): for each witness whose last cosigned size is below
 * the directory's, `POST <url>/add-checkpoint` (C2SP tlog-witness) with
 *
 *     old <last size>\n<consistency proof lines, base64>\n\n<signed note>
 *
 * then verify the answered cosignature line (C2SP tlog-cosignature, cosignature/v1) against the
 * witness's vkey and store it in `key_directory_cosignatures`, from where every checkpoint of that
 * size carries it (KeyDirectory.checkpoint). A witness's last size is the largest `tree_size`
 * stored for its vkey (0 when none); a 409 answer (`text/x.tlog.size`: the witness's own last
 * size) is retried once from that size. Runs as the cluster-wide job `key_directory_witnesses`
 * (jobs/key-directory-witnesses.ts), so one instance talks to the witnesses at a time.
 */
import { max, eq } from 'drizzle-orm';
import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../../db/client.js';
import { crossTenant, crossTenantRead } from '../../db/tenant.js';
import { keyDirectoryCosignatures } from '../../db/schema/index.js';
import { parseWitnessVkey, verifyCosignatureLine, type WitnessKey } from '../../lib/cosignature.js';
import type { KeyDirectory } from './service.js';

const REASON = 'key directory: witness cosignatures are a platform table without tenant_id';

/** A witness of the platform: its `add-checkpoint` URL prefix (no trailing slash) and its vkey. */
export interface WitnessEndpoint {
  url: string;
  vkey: string;
}

/** What one publication did: witnesses asked, new cosignatures stored, witnesses that failed. */
export interface PublishResult {
  witnesses: number;
  cosigned: number;
  failed: number;
}

/** What the publisher needs. */
export interface WitnessPublisherDeps {
  db: Db;
  directory: Pick<KeyDirectory, 'witnessRequest'>;
  witnesses: readonly WitnessEndpoint[];
  log: Pick<FastifyBaseLogger, 'warn'>;
  /** Per-request timeout (ms). */
  timeoutMs: number;
}

/** A witness answer other than 200 or a usable 409. */
class WitnessRefused extends Error {}

export class WitnessPublisher {
  private readonly keys: Map<string, WitnessKey>;

  /** @throws Error when a configured vkey does not parse (config.ts checks them first). */
  constructor(private readonly d: WitnessPublisherDeps) {
    this.keys = new Map(
      d.witnesses.map((w) => {
        const key = parseWitnessVkey(w.vkey);
        if (!key) throw new Error(`not a witness vkey: ${w.vkey}`);
        return [w.vkey, key];
      }),
    );
  }

  /**
   * Send the newest checkpoint to every witness behind it, concurrently; a witness's failure is
   * logged (its URL without query and credentials, the status or error) and counted, never thrown.
   */
  async publish(signal?: AbortSignal): Promise<PublishResult> {
    const outcomes = await Promise.all(
      this.d.witnesses.map((w) =>
        this.publishTo(w, signal).catch((err: unknown) => {
          this.d.log.warn({ witness: safeUrl(w.url), err: err instanceof Error ? err.message : String(err) }, 'key directory witness failed');
          return 'failed' as const;
        }),
      ),
    );
    return { witnesses: this.d.witnesses.length, cosigned: outcomes.filter((o) => o === 'cosigned').length, failed: outcomes.filter((o) => o === 'failed').length };
  }

  /** The largest tree size stored for `vkey` (0 when none). */
  lastSize(vkey: string): Promise<number> {
    return crossTenantRead(this.d.db, REASON, async (db) => {
      const [row] = await db.select({ size: max(keyDirectoryCosignatures.treeSize) }).from(keyDirectoryCosignatures).where(eq(keyDirectoryCosignatures.witness, vkey));
      return Number(row?.size ?? 0);
    });
  }

  /** One witness: send when the directory grew past its last size; retry once after a 409. */
  private async publishTo(w: WitnessEndpoint, signal?: AbortSignal): Promise<'cosigned' | 'current'> {
    let old = await this.lastSize(w.vkey);
    for (let attempt = 0; ; attempt++) {
      const req = await this.d.directory.witnessRequest(old);
      if (req.size <= old && attempt === 0) return 'current';
      const body = `old ${old}\n${req.proof.map((p) => `${p}\n`).join('')}\n${req.note}`;
      const res = await post(`${w.url}/add-checkpoint`, body, this.d.timeoutMs, signal);
      if (res.status === 409 && attempt === 0 && res.contentType.startsWith('text/x.tlog.size')) {
        const size = /^(0|[1-9][0-9]{0,15})\n?$/.exec(res.text)?.[1];
        if (size === undefined) throw new WitnessRefused('409 without a tree size');
        old = Number(size);
        if (old > req.size) throw new WitnessRefused(`the witness holds size ${old}, beyond the directory's ${req.size}`);
        continue;
      }
      if (res.status !== 200) throw new WitnessRefused(`answered ${res.status}`);
      const key = this.keys.get(w.vkey)!;
      const line = res.text.split('\n').find((l) => verifyCosignatureLine(key, req.note, l) !== undefined);
      if (!line) throw new WitnessRefused('answered no valid cosignature by its vkey');
      await crossTenant(this.d.db, REASON, (tx) =>
        tx.insert(keyDirectoryCosignatures).values({ treeSize: req.size, witness: w.vkey, line, rootHash: req.root }).onConflictDoNothing(),
      );
      return 'cosigned';
    }
  }
}

/** The largest witness answer read (bytes): a few cosignature lines, or a size. */
const MAX_ANSWER = 64 * 1024;

/** POST `body` as text with a timeout (and the job's abort signal); the answer's status, content type and text. */
async function post(url: string, body: string, timeoutMs: number, signal?: AbortSignal): Promise<{ status: number; contentType: string; text: string }> {
  const timeout = AbortSignal.timeout(timeoutMs);
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'text/plain; charset=utf-8' },
    body,
    redirect: 'error',
    signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
  });
  if (Number(res.headers.get('content-length') ?? 0) > MAX_ANSWER) {
    await res.body?.cancel();
    throw new WitnessRefused(`answered more than ${MAX_ANSWER} bytes`);
  }
  const text = (await res.text()).slice(0, MAX_ANSWER);
  return { status: res.status, contentType: res.headers.get('content-type') ?? '', text };
}

/** `url` without credentials, query or fragment (for logs). */
function safeUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return '(unparsable URL)';
  }
}

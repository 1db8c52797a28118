/**
 * `npm run cli -- owner-token`: an owner JWT from the built-in development identity provider,
 * whose signing key lives in `DATA_DIR/dev-idp-key.json` (auth/dev-idp.ts). A service accepts only
 * tokens signed with the key of its own `DATA_DIR`, so before printing, the command asks the
 * service it would be used with (`PUBLIC_URL`, else `http://HOST:PORT`, or `--url`) for its
 * published keys (`/.well-known/jwks.json`): when the service answers and does not publish this
 * key, the token will be refused (401), and the command says so on stderr, naming the `DATA_DIR`
 * it used. When no service answers, a note on stderr names that `DATA_DIR`. The token is printed
 * on stdout either way (a check against the wrong service must not break a script).
 */
import { DevIdentityProvider } from '../auth/dev-idp.js';

/** How long the service check waits (ms). */
const CHECK_TIMEOUT_MS = 2_000;

/** What {@link ownerToken} needs. */
export interface OwnerTokenOptions {
  dataDir: string;
  /** The service base URL the token is meant for. */
  baseUrl: string;
  sub: string;
  claims: Record<string, unknown>;
  operator: boolean;
  ttlSec?: number;
  out?: (line: string) => void;
  err?: (line: string) => void;
}

/** The key ids the service at `baseUrl` publishes, or undefined when it does not answer. */
async function publishedKids(baseUrl: string): Promise<string[] | undefined> {
  try {
    const res = await fetch(`${baseUrl}/.well-known/jwks.json`, { signal: AbortSignal.timeout(CHECK_TIMEOUT_MS) });
    if (!res.ok) return undefined;
    const body = (await res.json()) as { keys?: { kid?: unknown }[] };
    return (body.keys ?? []).map((k) => String(k.kid));
  } catch {
    return undefined;
  }
}

/** Mint and print the token, with the check's warning or note on stderr (see the file comment). */
export async function ownerToken(o: OwnerTokenOptions): Promise<void> {
  const out = o.out ?? ((line: string) => console.log(line));
  const err = o.err ?? ((line: string) => console.error(line));
  const idp = await DevIdentityProvider.load(o.dataDir);
  const kids = await publishedKids(o.baseUrl);
  const keyFile = `DATA_DIR=${o.dataDir} (its dev-idp-key.json)`;
  if (kids && !kids.includes(String(idp.publicJwk.kid))) {
    err(
      `warning: the service at ${o.baseUrl} will refuse this token (401): it is signed with the development key of ${keyFile}, ` +
        'which that service does not use. Run owner-token with the DATA_DIR the service was started with (or point PORT / PUBLIC_URL / --url at the service that uses this one).',
    );
  } else if (!kids) err(`note: no service answered at ${o.baseUrl}; this token is signed with the development key of ${keyFile}, and only a service started with that DATA_DIR accepts it`);
  out(await idp.mint(o.sub, { claims: o.claims, operator: o.operator, ...(o.ttlSec !== undefined ? { ttlSec: o.ttlSec } : {}) }));
}

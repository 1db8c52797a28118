/**
 * Owner sign-in in the browser (design §8.30–§8.31):
 * - development: `POST /api/v1/dev/login {email}` (only when `GET /api/v1/auth/config` says the
 *   built-in provider is active and this server accepts it);
 * - OIDC: authorization code with PKCE (RFC 7636) as a public client, with `oauth4webapi`. The
 *   token the service verifies is the access token when it is a JWT, else the ID token.
 * The session (token, expiry, subject) lives in `sessionStorage`: it ends with the tab. With
 * "Keep me signed in on this browser" (`persistent`) it lives in `localStorage` instead and
 * survives closing the tab, until the token expires or the owner signs out (both clear it). The
 * owner device's keys are sealed in IndexedDB either way (`sealed-store.ts`). A session that
 * expires sends the owner to sign-in with the page to come back to (drafts are kept by `drafts.ts`).
 */
import type { AuthConfig, ParleyClient } from '@parley/sdk';
import * as oauth from 'oauth4webapi';

/** A signed-in owner. `expiresAt`: epoch milliseconds. */
export interface AuthSession {
  token: string;
  expiresAt: number;
  sub: string;
  email?: string;
  provider: 'dev' | 'oidc';
  /** Kept on this browser across closed tabs (`localStorage`) instead of this tab only. */
  persistent?: boolean;
}

const SESSION_KEY = 'parley.session';
const RETURN_KEY = 'parley.return-to';
const OIDC_KEY = 'parley.oidc';

/** The claims of a JWT, read without verification (the service verifies it; the app only displays them). */
export function readClaims(token: string): Record<string, unknown> {
  const part = token.split('.')[1];
  if (!part) throw new Error('not a JWT');
  const b64 = part.replace(/-/g, '+').replace(/_/g, '/').padEnd(Math.ceil(part.length / 4) * 4, '=');
  const json = new TextDecoder().decode(Uint8Array.from(atob(b64), (c) => c.charCodeAt(0)));
  return JSON.parse(json) as Record<string, unknown>;
}

/** A session from an owner JWT; `fallbackExpiresAt` when the token has no `exp`. */
export function sessionFromToken(token: string, provider: AuthSession['provider'], fallbackExpiresAt?: number): AuthSession {
  const c = readClaims(token);
  const sub = typeof c.sub === 'string' ? c.sub : '';
  if (!sub) throw new Error('the token has no subject');
  const exp = typeof c.exp === 'number' ? c.exp * 1000 : (fallbackExpiresAt ?? Date.now() + 3600_000);
  return { token, expiresAt: exp, sub, ...(typeof c.email === 'string' ? { email: c.email } : {}), provider };
}

function readSession(store: Storage, now: number): AuthSession | undefined {
  const raw = store.getItem(SESSION_KEY);
  if (!raw) return undefined;
  try {
    const s = JSON.parse(raw) as AuthSession;
    if (typeof s.token === 'string' && typeof s.expiresAt === 'number' && s.expiresAt > now) return s;
  } catch {
    // unreadable: dropped below
  }
  store.removeItem(SESSION_KEY);
  return undefined;
}

/**
 * The current session: this tab's (`sessionStorage`), else the one kept on this browser
 * (`localStorage`, "Keep me signed in"); undefined when signed out or expired (an expired or
 * unreadable one is removed).
 */
export function loadSession(now = Date.now()): AuthSession | undefined {
  return readSession(sessionStorage, now) ?? readSession(localStorage, now);
}

/** Save the session: in `localStorage` when `s.persistent`, else in this tab's `sessionStorage` (the other copy is removed). */
export function saveSession(s: AuthSession): void {
  const [keep, drop] = s.persistent ? [localStorage, sessionStorage] : [sessionStorage, localStorage];
  keep.setItem(SESSION_KEY, JSON.stringify(s));
  drop.removeItem(SESSION_KEY);
}

/** Forget the session in this tab and on this browser (sign-out, expiry). */
export function clearSession(): void {
  sessionStorage.removeItem(SESSION_KEY);
  localStorage.removeItem(SESSION_KEY);
}

/** Remember where to come back to after signing in again. */
export function rememberReturn(path: string): void {
  if (!path.startsWith('/sign-in') && !path.startsWith('/auth/')) sessionStorage.setItem(RETURN_KEY, path);
}

/** The page to go back to after sign-in (consumed). */
export function takeReturn(): string {
  const p = sessionStorage.getItem(RETURN_KEY) ?? '/';
  sessionStorage.removeItem(RETURN_KEY);
  return p.startsWith('/') && !p.startsWith('//') ? p : '/';
}

/** Development sign-in (design §8.31). @throws ParleyApiError 400 (bad address), 403 (server not on loopback), 404 (OIDC configured). */
export async function devSignIn(client: ParleyClient, email: string): Promise<AuthSession> {
  const { token, expires_at } = await client.devLogin({ email });
  return sessionFromToken(token, 'dev', Date.parse(expires_at));
}

function redirectUri(): string {
  return `${location.origin}/auth/callback`;
}

/**
 * oauth4webapi refuses plain-HTTP endpoints; a provider on this machine's loopback address
 * (development, tests) is allowed over HTTP, nothing else.
 */
export function insecureAllowed(issuer: URL): boolean {
  return issuer.protocol === 'http:' && ['127.0.0.1', 'localhost', '[::1]'].includes(issuer.hostname);
}

function requestOptions(cfg: NonNullable<AuthConfig['oidc']>) {
  return insecureAllowed(new URL(cfg.issuer)) ? { [oauth.allowInsecureRequests]: true } : {};
}

async function server(cfg: NonNullable<AuthConfig['oidc']>): Promise<oauth.AuthorizationServer> {
  const issuer = new URL(cfg.issuer);
  return oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oidc', ...requestOptions(cfg) }));
}

/** Start the OIDC authorization code flow with PKCE: navigates away to the provider; `persistent` ("Keep me signed in") is applied when it comes back. */
export async function startOidc(cfg: NonNullable<AuthConfig['oidc']>, persistent = false): Promise<void> {
  const as = await server(cfg);
  if (!as.authorization_endpoint) throw new Error('the OIDC provider publishes no authorization endpoint');
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const nonce = oauth.generateRandomNonce();
  sessionStorage.setItem(OIDC_KEY, JSON.stringify({ verifier, state, nonce, persistent }));
  const url = new URL(as.authorization_endpoint);
  url.searchParams.set('client_id', cfg.client_id);
  url.searchParams.set('redirect_uri', redirectUri());
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('scope', cfg.scope);
  url.searchParams.set('state', state);
  url.searchParams.set('nonce', nonce);
  url.searchParams.set('code_challenge', await oauth.calculatePKCECodeChallenge(verifier));
  url.searchParams.set('code_challenge_method', 'S256');
  location.assign(url.href);
}

/**
 * Finish the OIDC flow on `/auth/callback`: check state, exchange the code with the PKCE
 * verifier, validate the ID token (issuer, audience, nonce, expiry).
 * @throws Error (or oauth4webapi's errors) when the answer is an error or does not validate.
 */
export async function finishOidc(cfg: NonNullable<AuthConfig['oidc']>, callback: URL): Promise<AuthSession> {
  const saved = JSON.parse(sessionStorage.getItem(OIDC_KEY) ?? 'null') as { verifier: string; state: string; nonce: string; persistent?: boolean } | null;
  if (!saved) throw new Error('no sign-in in progress in this tab; start again');
  sessionStorage.removeItem(OIDC_KEY);
  const as = await server(cfg);
  const client: oauth.Client = { client_id: cfg.client_id };
  const params = oauth.validateAuthResponse(as, client, callback, saved.state);
  const response = await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, redirectUri(), saved.verifier, requestOptions(cfg));
  const result = await oauth.processAuthorizationCodeResponse(as, client, response, { expectedNonce: saved.nonce, requireIdToken: true });
  const claims = oauth.getValidatedIdTokenClaims(result);
  const token = result.access_token.split('.').length === 3 ? result.access_token : (result.id_token ?? result.access_token);
  const expiresAt = result.expires_in !== undefined ? Date.now() + result.expires_in * 1000 : undefined;
  const s = sessionFromToken(token, 'oidc', expiresAt);
  const email = typeof claims?.email === 'string' ? claims.email : s.email;
  return { ...s, ...(email ? { email } : {}), ...(saved.persistent ? { persistent: true } : {}) };
}

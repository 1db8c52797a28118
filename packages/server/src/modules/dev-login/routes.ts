/**
 * Development sign-in (design §8.31): `POST /api/v1/dev/login {email}` answers `{token,
 * expires_at}`, an owner JWT of the built-in development identity provider for `sub` = the
 * lowercased address, so the owners' web app can sign in on the embedded default without an OIDC
 * provider. It exists only while that provider is active (404 when `OIDC_*` is configured) and is
 * refused (403) unless the server listens on a loopback address and the request itself names it
 * (`Host` and `Origin` are loopback names or the host of `PUBLIC_URL`: a page that rebinds its own
 * name to 127.0.0.1 is refused): anyone who can reach it can sign in as anyone. `GET /api/v1/auth/config` tells the web app which of the two ways applies (and the
 * OIDC provider's public client when one is configured).
 */
import { isLoopbackHost, ROUTES } from '@parley/protocol';
import type { FastifyPluginAsync } from 'fastify';
import type { DevIdentityProvider } from '../../auth/dev-idp.js';
import type { OidcConfig } from '../../config.js';
import { serve } from '../../http/contract.js';
import { namesThisService } from '../../http/host-check.js';
import { AppError, ErrorCode, forbidden } from '../../lib/errors.js';

/** Lifetime of a development sign-in token (seconds). */
export const DEV_LOGIN_TTL_SEC = 12 * 3600;

export interface DevLoginOptions {
  /** The built-in identity provider; undefined when OIDC is configured. */
  devIdp: DevIdentityProvider | undefined;
  /** The address the server listens on (config `host`). */
  host: string;
  /** The OIDC provider, when configured (then `devIdp` is undefined). */
  oidc: OidcConfig | undefined;
  /** `PUBLIC_URL`: its host is, besides loopback names, the one a sign-in request may name. */
  publicUrl: string;
}

export const devLoginRoutes: FastifyPluginAsync<DevLoginOptions> = async (app, { devIdp, host, oidc, publicUrl }) => {
  serve(app, ROUTES.authConfig, async () => {
    if (!oidc) return { mode: 'dev' as const, dev_login: devIdp !== undefined && isLoopbackHost(host) };
    return { mode: 'oidc' as const, dev_login: false, oidc: { issuer: oidc.issuer, client_id: oidc.clientId ?? '', scope: oidc.scope } };
  });
  serve(app, ROUTES.devLogin, async (req) => {
    if (!devIdp) throw new AppError(ErrorCode.NotFound, 'development sign-in is off: an OIDC provider is configured; sign in with it');
    if (!isLoopbackHost(host)) throw forbidden(`development sign-in is refused: the server listens on ${host}, not a loopback address`);
    if (!namesThisService(req, publicUrl)) throw forbidden('development sign-in is refused: the request\'s Host or Origin is not a loopback name or the host of PUBLIC_URL');
    const token = await devIdp.mint(req.body.email.toLowerCase(), { ttlSec: DEV_LOGIN_TTL_SEC });
    return { token, expires_at: new Date(Date.now() + DEV_LOGIN_TTL_SEC * 1000).toISOString() };
  });
};

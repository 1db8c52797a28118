/**
 * The longest lifetime a verifier accepts for a JWT (RFC 7519 §4.1.4 `exp`, §4.1.6 `iat`): owner
 * JWTs up to `OWNER_TOKEN_MAX_LIFETIME_SEC`, device JWTs up to `DEVICE_TOKEN_TTL_SEC`. Signature,
 * issuer, audience and expiry are jose's checks; this one bounds how far ahead `exp` may lie.
 */
import type { JWTPayload } from 'jose';

/** Clock difference tolerated between the issuer and this instance when `exp` is compared with now, in seconds. */
export const LIFETIME_CLOCK_SKEW_SEC = 60;

/**
 * True when the token's lifetime is within `maxSec` seconds: it has a numeric `exp`; `exp - iat`
 * (when `iat` is present) is at most `maxSec`; and `exp - now` is at most `maxSec` plus
 * {@link LIFETIME_CLOCK_SKEW_SEC} (so an `iat` in the future does not stretch the bound).
 * @param nowSec the current time in seconds since the epoch.
 */
export function lifetimeWithin(payload: JWTPayload, maxSec: number, nowSec = Math.floor(Date.now() / 1000)): boolean {
  const { exp, iat } = payload;
  if (typeof exp !== 'number' || !Number.isFinite(exp)) return false;
  if (iat !== undefined && (typeof iat !== 'number' || exp - iat > maxSec)) return false;
  return exp - nowSec <= maxSec + LIFETIME_CLOCK_SKEW_SEC;
}

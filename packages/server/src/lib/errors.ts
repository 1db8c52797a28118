/**
 * One error-code enum and one error type for the whole service (contract §7). The HTTP error handler
 * (http/errors.ts) renders every AppError, validation error and framework error as `{detail}`
 * with the status given here; the WebSocket gateway renders the same codes as error frames.
 */
export enum ErrorCode {
  BadRequest = 'bad_request',
  Unauthorized = 'unauthorized',
  Forbidden = 'forbidden',
  DeviceRevoked = 'device_revoked',
  NotFound = 'not_found',
  Conflict = 'conflict',
  PayloadTooLarge = 'payload_too_large',
  UnsupportedMediaType = 'unsupported_media_type',
  RateLimited = 'rate_limited',
  Internal = 'internal',
  /** The payment processor declined the payment method (marketplace rentals). */
  PaymentRequired = 'payment_required',
  /** An upstream service (the payment processor) failed or could not be reached. */
  BadGateway = 'bad_gateway',
}

/** HTTP status of each code (contract §7). */
export const STATUS: Record<ErrorCode, number> = {
  [ErrorCode.BadRequest]: 400,
  [ErrorCode.Unauthorized]: 401,
  [ErrorCode.Forbidden]: 403,
  [ErrorCode.DeviceRevoked]: 403,
  [ErrorCode.NotFound]: 404,
  [ErrorCode.Conflict]: 409,
  [ErrorCode.PayloadTooLarge]: 413,
  [ErrorCode.UnsupportedMediaType]: 415,
  [ErrorCode.RateLimited]: 429,
  [ErrorCode.Internal]: 500,
  [ErrorCode.PaymentRequired]: 402,
  [ErrorCode.BadGateway]: 502,
};

/** An expected failure with a client-facing `detail` message. */
export class AppError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    readonly detail: string,
    /** For 429: milliseconds until a retry may succeed. */
    readonly retryAfterMs?: number,
  ) {
    super(detail);
    this.status = STATUS[code];
  }
}

export const badRequest = (detail: string) => new AppError(ErrorCode.BadRequest, detail);
export const unauthorized = (detail = 'missing or invalid authentication') => new AppError(ErrorCode.Unauthorized, detail);
export const forbidden = (detail = 'forbidden') => new AppError(ErrorCode.Forbidden, detail);
export const notFound = (what: string) => new AppError(ErrorCode.NotFound, `${what} not found`);
export const conflict = (detail: string) => new AppError(ErrorCode.Conflict, detail);
export const deviceRevoked = () => new AppError(ErrorCode.DeviceRevoked, 'device revoked');

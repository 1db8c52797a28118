/** An error with a stable machine-readable `code`, the base of the SDK's module errors. */
export class CodedError<C extends string> extends Error {
  constructor(
    readonly code: C,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

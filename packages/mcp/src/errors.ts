/**
 * Tool failures (contract §4.19): every failure of a tool is answered as an MCP tool error
 * (`isError: true`) whose text is the service's `{detail}` (or a local explanation), never a
 * protocol error that would crash the host's call.
 */
import { ParleyApiError, ParleyNetworkError } from '@parley/sdk';

/** A failure to show the agent as the tool's answer; `message` is what it reads. */
export class ToolError extends Error {
  override readonly name = 'ToolError';
  /** HTTP status of the service (or plugin) answer behind it, when there was one. */
  readonly status: number | undefined;

  constructor(message: string, status?: number) {
    super(message);
    this.status = status;
  }
}

/**
 * The text of any failure: a ParleyApiError's `{detail}` prefixed with its status, a network
 * failure with the endpoint to check, a ToolError as is.
 */
export function describeToolFailure(err: unknown, endpoint: string): ToolError {
  if (err instanceof ToolError) return err;
  if (err instanceof ParleyApiError) return new ToolError(`${err.status} ${err.detail}`, err.status);
  if (err instanceof ParleyNetworkError) return new ToolError(`cannot reach the Parley service at ${endpoint} (${err.message}); check PARLEY_ENDPOINT`);
  return new ToolError(err instanceof Error ? err.message : String(err));
}
